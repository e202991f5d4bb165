// filled in by the patterns work
