#include "backends/pcsampling/context_sampling.hpp"

#include "backends/counters/counter_errors.hpp"
#include "kscope/lines.hpp"

namespace kscope::pcsampling {
namespace {

constexpr std::size_t kRecordsPerRead = 10000;     // PCs per cuptiPCSamplingGetData
constexpr std::size_t kScratchBytes = 16u << 20;  // CUPTI's decoded records: about 16 bytes a PC and reason

void check(CUptiResult status, const char* call) { counters::check_counters(status, call); }

std::size_t reason_count(CUcontext context) {
  std::size_t count = 0;
  CUpti_PCSamplingGetNumStallReasonsParams p{};
  p.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  p.ctx = context;
  p.numStallReasons = &count;
  check(cuptiPCSamplingGetNumStallReasons(&p), "cuptiPCSamplingGetNumStallReasons");
  return count;
}

}  // namespace

ContextSampling::Buffer::Buffer(std::size_t count, std::size_t reason_slots)
    : pcs(count), reasons(count, std::vector<CUpti_PCSamplingStallReason>(reason_slots)) {
  data.size = sizeof(CUpti_PCSamplingData);
  data.collectNumPcs = count;
  for (std::size_t i = 0; i < count; ++i) {
    pcs[i].size = sizeof(CUpti_PCSamplingPCData);
    pcs[i].stallReason = reasons[i].data();
  }
  data.pPcData = pcs.data();
}

ContextSampling::ContextSampling(CUcontext context, unsigned period_log2)
    : context_(context), config_buffer_(0, 0), read_buffer_(0, 0) {
  CUpti_PCSamplingEnableParams enable{};
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = context;
  check(cuptiPCSamplingEnable(&enable), "cuptiPCSamplingEnable");
  enabled_ = true;
  try {
    const std::size_t count = reason_count(context);
    std::vector<std::uint32_t> indices(count);
    std::vector<std::vector<char>> names(count, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, '\0'));
    std::vector<char*> name_pointers;
    for (auto& n : names) name_pointers.push_back(n.data());
    CUpti_PCSamplingGetStallReasonsParams reasons{};
    reasons.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    reasons.ctx = context;
    reasons.numStallReasons = count;
    reasons.stallReasonIndex = indices.data();
    reasons.stallReasons = name_pointers.data();
    check(cuptiPCSamplingGetStallReasons(&reasons), "cuptiPCSamplingGetStallReasons");
    for (std::size_t i = 0; i < count; ++i) {
      const std::string name(names[i].data());
      if (name.ends_with("_not_issued")) continue;  // a subset of its reason's samples
      if (indices[i] >= reason_names_.size()) reason_names_.resize(indices[i] + 1);
      reason_names_[indices[i]] = stall_reason_name(name);
      reason_indices_.push_back(indices[i]);
    }
    config_buffer_ = Buffer(kRecordsPerRead, reason_indices_.size());
    read_buffer_ = Buffer(kRecordsPerRead, reason_indices_.size());

    std::vector<CUpti_PCSamplingConfigurationInfo> config(7);
    config[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    config[0].attributeData.stallReasonData.stallReasonCount = reason_indices_.size();
    config[0].attributeData.stallReasonData.pStallReasonIndex = reason_indices_.data();
    config[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    config[1].attributeData.samplingPeriodData.samplingPeriod = period_log2;
    config[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    config[2].attributeData.scratchBufferSizeData.scratchBufferSize = kScratchBytes;
    config[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    config[3].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    config[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    config[4].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    config[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    config[5].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    config[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    config[6].attributeData.samplingDataBufferData.samplingDataBuffer = &config_buffer_.data;
    CUpti_PCSamplingConfigurationInfoParams params{};
    params.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    params.ctx = context;
    params.numAttributes = config.size();
    params.pPCSamplingConfigurationInfo = config.data();
    check(cuptiPCSamplingSetConfigurationAttribute(&params), "cuptiPCSamplingSetConfigurationAttribute");
  } catch (...) {
    CUpti_PCSamplingDisableParams disable{};
    disable.size = CUpti_PCSamplingDisableParamsSize;
    disable.ctx = context_;
    cuptiPCSamplingDisable(&disable);
    throw;
  }
}

ContextSampling::~ContextSampling() {
  if (enabled_) {
    CUpti_PCSamplingDisableParams disable{};
    disable.size = CUpti_PCSamplingDisableParamsSize;
    disable.ctx = context_;
    cuptiPCSamplingDisable(&disable);
  }
  // The records' function names stay: cupti_pcsampling.h shares each "across all the records including
  // records from activity APIs representing the same function" and lets the user free it only once all
  // of them are processed, and a later session's records of the same function may carry the same
  // string, so no moment before the process ends is safe (a name per function, tens of bytes).
}

void ContextSampling::start() {
  CUpti_PCSamplingStartParams p{};
  p.size = CUpti_PCSamplingStartParamsSize;
  p.ctx = context_;
  check(cuptiPCSamplingStart(&p), "cuptiPCSamplingStart");
}

void ContextSampling::stop() {
  CUpti_PCSamplingStopParams p{};
  p.size = CUpti_PCSamplingStopParamsSize;
  p.ctx = context_;
  check(cuptiPCSamplingStop(&p), "cuptiPCSamplingStop");
}

void ContextSampling::take(Buffer& buffer, RangeSamples& out) {
  CUpti_PCSamplingData& d = buffer.data;
  out.total += d.totalSamples;
  out.dropped += d.droppedSamples;
  out.buffer_full = out.buffer_full || d.hardwareBufferFull != 0;
  for (std::size_t i = 0; i < d.totalNumPcs && i < buffer.pcs.size(); ++i) {
    const CUpti_PCSamplingPCData& pc = buffer.pcs[i];
    PcRecord& r = out.records.emplace_back();
    r.cubin_crc = pc.cubinCrc;
    r.function = pc.functionName ? pc.functionName : "";
    r.pc_offset = pc.pcOffset;
    for (std::size_t k = 0; k < pc.stallReasonCount && k < buffer.reasons[i].size(); ++k) {
      const CUpti_PCSamplingStallReason& s = pc.stallReason[k];
      if (s.samples == 0) continue;
      const std::string name = s.pcSamplingStallReasonIndex < reason_names_.size()
                                   ? reason_names_[s.pcSamplingStallReasonIndex]
                                   : "reason_" + std::to_string(s.pcSamplingStallReasonIndex);
      r.stalls.emplace_back(name, s.samples);
    }
  }
  d.totalNumPcs = 0;
  d.totalSamples = 0;
  d.droppedSamples = 0;
  d.hardwareBufferFull = 0;
}

RangeSamples ContextSampling::drain() {
  RangeSamples out;
  take(config_buffer_, out);
  CUpti_PCSamplingGetDataParams p{};
  p.size = CUpti_PCSamplingGetDataParamsSize;
  p.ctx = context_;
  p.pcSamplingData = &read_buffer_.data;
  for (std::size_t reads = 0; reads < 100000; ++reads) {
    const CUptiResult status = cuptiPCSamplingGetData(&p);
    if (status == CUPTI_ERROR_OUT_OF_MEMORY) {
      out.buffer_full = true;  // the hardware buffer filled: counted as dropped, said per kernel
    } else {
      check(status, "cuptiPCSamplingGetData");
    }
    const bool more = read_buffer_.data.remainingNumPcs > 0;
    take(read_buffer_, out);
    if (!more) break;
  }
  return out;
}

}  // namespace kscope::pcsampling
