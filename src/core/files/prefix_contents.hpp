#pragma once
// What an output prefix holds: the files of an earlier result, the kind of result that wrote them,
// and whether it finished. Four kinds write under a prefix, each its own files:
//   sweep        manifest.json (its "kind" member: "sweep", or none), progress.jsonl, samples.csv,
//                the output formats' files (summary.csv, results.json, ...), ncu_report.ncu-rep
//                (Backend::ncu writes no manifest: its report says it was a sweep)
//   evaluation   a sweep's files, its manifest's "kind" "evaluation", and results.json holding it
//   race         race-options.json (written as it starts), race.csv and the output formats' files,
//                and each round's sweep under round-<k>-
//   merge        the output formats' files alone: merged shards
// One kind never continues, replaces or moves another's files; a finished result of the writer's
// own kind is moved aside as GNU's numbered backups are (cp --backup=numbered): every file gets
// the suffix .~N~, one N for them all, above any N used there before.
#include <span>
#include <string>
#include <vector>

#include "kscope/detail/enum_names.hpp"

namespace kscope::detail {

enum class ResultKind { sweep, evaluation, race, merge };

// "sweep", "evaluation", "race", "merge": the manifest's "kind".
std::string to_string(ResultKind kind);
std::span<const EnumName<ResultKind>> enum_names(ResultKind);  // "sweep", "evaluation", "race", "merge"
// "a sweep", "an evaluation", "a race", "merged results".
std::string with_article(ResultKind kind);

struct PrefixContents {
  enum class State { empty, finished, unfinished, unknown };  // unknown: files no kind claims
  State state = State::empty;
  ResultKind kind = ResultKind::sweep;  // of a finished or unfinished result
  // "a finished sweep", "an unfinished race (killed, interrupted or failed in round 2)", ...
  std::string description;
  // The files that hold something, as paths: an empty progress.jsonl, or a samples.csv of its
  // header alone (what a sweep that failed as it started leaves), records nothing.
  std::vector<std::string> files;
};

// Reads what is under `prefix`. Throws FileError when one of the files a writer would write there
// is a symbolic link or no regular file: kscope never writes, removes or moves through such a path.
PrefixContents prefix_contents(const std::string& prefix);

// FileError when `path` is a symbolic link, or exists and is no regular file.
void check_prefix_file(const std::string& path);

// Every file a writer of `kind` may write under `prefix`, whether it exists or not (a race: its
// rounds' up to the last one found).
std::vector<std::string> files_of(ResultKind kind, const std::string& prefix);

// Renames each of `files` to "<file>.~N~", N above every backup number of `files` and of the files
// of `prefix` there; returns N. On a failure, the files moved are moved back and FileError thrown.
unsigned back_up(const std::string& prefix, const std::vector<std::string>& files);

// Removes `files` (missing ones are no error); throws FileError naming the first that cannot go.
void remove_files(const std::vector<std::string>& files, const std::string& why);

}  // namespace kscope::detail
