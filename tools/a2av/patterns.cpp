#include "patterns.hpp"
