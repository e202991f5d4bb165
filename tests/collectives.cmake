# The textbook collectives against the vendor collectives, at every rank count.
a2av_mpi_test(NAME test_collectives SOURCES mpi/test_collectives.cpp MAX_RANKS 8 TIMEOUT 120)
