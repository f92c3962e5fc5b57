#pragma once
// kscope: profiling as code. Mark kernels with Annotation, sweep a body over configs with
// profile(), get one table of kernel measurements with statistics.
#include "kscope/annotation.hpp"
#include "kscope/compare.hpp"
#include "kscope/config.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/merge.hpp"
#include "kscope/profile.hpp"
#include "kscope/progress.hpp"
#include "kscope/results.hpp"
#include "kscope/settings.hpp"
#include "kscope/shard.hpp"
#include "kscope/statistics.hpp"
#include "kscope/sweep.hpp"
#include "kscope/table.hpp"
#include "kscope/value.hpp"
