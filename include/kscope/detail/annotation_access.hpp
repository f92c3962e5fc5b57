#pragma once
// What the language bindings need of an Annotation beyond its public interface.
#include <string>

#include "kscope/annotation.hpp"

namespace kscope::detail {

class AnnotationAccess {
 public:
  // The annotation's region, if open in the run in progress, is closed as abandoned (see
  // RunRecorder::abandon); the annotation is inactive afterwards.
  static void abandon(Annotation& annotation, const std::string& why) noexcept;
};

}  // namespace kscope::detail
