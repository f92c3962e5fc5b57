#include "kscope/results.hpp"
