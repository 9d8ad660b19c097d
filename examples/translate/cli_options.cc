#include "cli_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace headwise::cli {
namespace {

constexpr const char kHelp[] =
    R"(Usage: headwise-translate -m MODEL.hwm [options] [TEXT ...]

Translates each TEXT argument, or else each line of standard input, with a headwise model.
Standard input is read --window lines at a time; those lines are sorted by source length, cut
into batches (--batch, --batch-tokens), translated and printed in input order before the next
window is read, so the tool works in a pipe. Output has one line (or one JSON object) per input
line, in input order, also for lines that fail.

Options:
  -m, --model PATH        the .hwm model file (required)
  --beam N                beam size, 1 = greedy (default 1)
  --nbest N               hypotheses per line, <= --beam (default 1); with N > 1 the plain
                          output is "INDEX ||| TEXT ||| SCORE" per hypothesis, INDEX counted
                          from 0 over the input lines
  --max-len N             most target tokens generated per line, EOS included
                          (default 256, or the model's positions if fewer)
  --max-input-len N       most source tokens per line, EOS included; longer lines fail
                          (default 256, or the model's positions if fewer)
  --length-penalty X      score = sum(log p) / length^X (default 1.0)
  --beam-stop RULE        when a beam search ends (include/headwise/headwise.hpp states
                          the rules exactly): exhaustive (default) once --beam hypotheses
                          have finished; top-eos also once --nbest have finished and a
                          step's best candidate is EOS; outscored also once the --nbest-th
                          best finished score is at least the best live beam's at its
                          current length (both faster, both cost BLEU: README.md)
  --threads N             compute threads (default 1)
  --batch N               most lines translated together in one batch (default 8)
  --batch-tokens N        most tokens per batch, counted as lines x longest source (EOS
                          included); 0 = no budget (default); a longer line runs alone
  --window N              lines read, sorted by length and batched together (default
                          16 x --batch; 1 with --batch 1: each line is translated as read)
  --json                  one JSON object per input line:
                            {"line": 1, "input": "...",
                             "translations": [{"text": "...", "score": -1.2, "finished": true}],
                             "timing": {"batch_ms": 12.3, "batch_lines": 8, "batch": 0,
                                        "window_ms": 40.1, "window_lines": 128, "window": 0}}
                          batch_ms: the model time of the line's batch, window_ms: the wall
                          time of its window (tokenizing, every batch, decoding); the totals
                          are the sums over distinct "batch" / "window" numbers. A blank line
                          runs no batch: "batch": null, batch_ms 0, batch_lines 0.
                          a failed line: {"line": 2, "input": "...",
                                          "error": {"code": "INVALID_UTF8", "message": "..."}}
  --split-sentences       cut each line into sentences (after . ! ? or an ellipsis followed by
                          a space and a capital or digit, not after abbreviations such as
                          "e.g." or numbers: the rule that cut the model's training text),
                          translate each on its own and join the translations with the
                          spaces between them: a paragraph per line then translates as the
                          model was trained (README.md: what it gains). --max-input-len
                          then limits each sentence. Needs --nbest 1. With --json a line's
                          "batch", "batch_ms" and "batch_lines" are arrays, one entry per
                          batch its sentences ran in ("batch_lines": sentences)
  --prefix TEXT           every translation must begin with TEXT (in the target language):
                          the search is forced through its pieces and goes on from there
                          (CTranslate2's target_prefix; include/headwise/headwise.hpp,
                          "Target prefix"); scores count the prefix's log-probabilities.
                          A blank input line with a prefix fails. Not with --split-sentences
  --prefix-file FILE      line N of FILE is the prefix of input line N (an empty line: none);
                          an input line that FILE has no line for fails, and so does the run
                          (exit 1) when FILE has more lines than the input. With --json each
                          object then has "prefix"
  --min-len N             EOS is not chosen before N generated tokens (CTranslate2's
                          min_decoding_length); scores stay the model's log-probabilities.
                          Below --max-len (default 0: off)
  --sample                draw each token at random instead of taking the best (needs
                          --beam 1; include/headwise/headwise.hpp, "Sampling"): a line's
                          translation is fixed by --seed and its source, whatever the
                          batch or the threads. Shaped by:
    --top-k N             only the N most likely pieces (default 0: all)
    --top-p X             only the most likely pieces whose probabilities sum to X, in
                          (0, 1] (default 1: off)
    --temperature X       > 0; below 1 sharper, above 1 flatter (default 1)
    --seed N              0 .. 2^64-1 (default 0)
  --no-verify             skip the model checksum (faster load; structure is still checked)
  --fp16 MODE             fp16 arithmetic for fp16 models: auto (default: where the CPU has
                          it, aarch64 with ARMv8.2 FP16), off (always F32), require (no
                          translator, exit 3, where it is not available)
  --no-shortlist          compute the output layer over the whole vocabulary even when the
                          model carries a vocabulary shortlist (headwise-convert
                          --shortlist); by default each batch's output layer covers only the
                          pieces the shortlist allows for its lines
  --spin-workers          with --threads 2+: the pool's workers spin between the parallel
                          loops of a translation until it ends (default: at most 200 us,
                          then they sleep); for cores the process has to itself, slower
                          when other processes keep the cores busy
  --batch-lanes N         a batch of several lines is dealt out to N sub-batches, each
                          translated whole on one of the --threads (one wake of the
                          workers per batch instead of one per matrix product); 0
                          (default) = --threads where the weights are read in place (int8;
                          fp32 on x86 with AVX2), else 1; 1 = off (each product is split
                          over the threads). The translations are the same either way
  --verbose               print the compute precision and why, the kernel each weight
                          format runs on this CPU and whether the shortlist is used, to
                          standard error, e.g.
                          "headwise-translate: precision f16: the CPU has fp16 arithmetic ..."
                          "headwise-translate: kernels int8: neon-dotprod"
                          "headwise-translate: shortlist on (500 frequent pieces, lists for ..."
  -h, --help              print this help and exit
  --version               print the version and exit
  --                      end of options: every later argument is a TEXT

Input text:
  - empty and whitespace-only lines translate to an empty line without running the model
  - invalid UTF-8 fails the line (INVALID_UTF8, with the byte offset)
  - control characters (U+0000-U+001F, U+007F-U+009F; tab included) count as spaces
  - a line over --max-input-len tokens fails (INPUT_TOO_LONG); it is never truncated
  - a trailing carriage return (CRLF input) and a UTF-8 byte order mark at the start of
    standard input are removed
  A failed line prints an empty line (plain), no rows (--nbest > 1) or an error object (--json);
  its message goes to standard error as "headwise-translate: line N: CODE: message".

Exit status:
  0  every line was translated
  1  at least one line failed (the others were translated and printed)
  2  usage error: unknown flag, bad value, or limits the model cannot serve
  3  the model could not be loaded (missing, corrupt, checksum mismatch, no tokenizer)
)";

// Accepts the whole string as a base-10 integer in [lo, hi].
bool ParseInt(const std::string& s, int lo, int hi, int* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

// Accepts the whole string as a base-10 integer in [0, 2^64) (no sign).
bool ParseUint64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

bool ParseFloat(const std::string& s, float* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace

const char* HelpText() { return kHelp; }

int WindowLines(const CliOptions& o) {
  if (o.window > 0) return o.window;
  return o.batch == 1 ? 1 : 16 * o.batch;
}

bool ParseArgs(int argc, const char* const* argv, CliOptions* o, std::string* error) {
  constexpr int kMax = std::numeric_limits<int>::max();
  bool only_texts = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (only_texts || arg.empty() || arg[0] != '-') {
      o->texts.push_back(arg);
      continue;
    }
    if (arg == "--") { only_texts = true; continue; }
    if (arg == "-h" || arg == "--help") { o->help = true; continue; }
    if (arg == "--version") { o->version = true; continue; }
    if (arg == "--json") { o->json = true; continue; }
    if (arg == "--no-verify") { o->verify = false; continue; }
    if (arg == "--verbose") { o->verbose = true; continue; }
    if (arg == "--no-shortlist") { o->shortlist = false; continue; }
    if (arg == "--spin-workers") { o->spin_workers = true; continue; }
    if (arg == "--split-sentences") { o->split_sentences = true; continue; }
    if (arg == "--sample") { o->sample = true; continue; }

    // Flags with a value: "--flag VALUE" or "--flag=VALUE".
    std::string name = arg;
    std::string value;
    bool have_value = false;
    if (const size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      have_value = true;
    }
    static const char* const kValued[] = {"-m", "--model", "--beam", "--nbest", "--max-len",
                                          "--max-input-len", "--length-penalty", "--beam-stop",
                                          "--threads", "--batch", "--batch-tokens", "--window",
                                          "--fp16", "--batch-lanes", "--prefix",
                                          "--prefix-file", "--min-len", "--top-k", "--top-p",
                                          "--temperature", "--seed"};
    bool known = false;
    for (const char* k : kValued) known = known || name == k;
    if (!known) {
      *error = "unknown option '" + arg + "'";
      return false;
    }
    if (!have_value) {
      if (i + 1 >= argc) {
        *error = name + ": missing value";
        return false;
      }
      value = argv[++i];
    }
    auto bad = [&](const char* expected) {
      *error = name + ": expected " + expected + ", got '" + value + "'";
      return false;
    };
    if (name == "-m" || name == "--model") {
      if (value.empty()) return bad("a path");
      o->model_path = value;
    } else if (name == "--beam") {
      if (!ParseInt(value, 1, 1024, &o->beam)) return bad("an integer in [1, 1024]");
    } else if (name == "--nbest") {
      if (!ParseInt(value, 1, 1024, &o->nbest)) return bad("an integer in [1, 1024]");
    } else if (name == "--max-len") {
      if (!ParseInt(value, 1, kMax, &o->max_len)) return bad("an integer >= 1");
    } else if (name == "--max-input-len") {
      if (!ParseInt(value, 2, kMax, &o->max_input_len)) return bad("an integer >= 2");
    } else if (name == "--length-penalty") {
      if (!ParseFloat(value, &o->length_penalty)) return bad("a finite number");
    } else if (name == "--beam-stop") {
      if (value != "exhaustive" && value != "top-eos" && value != "outscored") {
        return bad("exhaustive, top-eos or outscored");
      }
      o->beam_stop = value;
    } else if (name == "--threads") {
      if (!ParseInt(value, 1, 1024, &o->threads)) return bad("an integer in [1, 1024]");
    } else if (name == "--batch-lanes") {
      if (!ParseInt(value, 0, 1024, &o->batch_lanes)) return bad("an integer in [0, 1024]");
    } else if (name == "--batch") {
      if (!ParseInt(value, 1, 65536, &o->batch)) return bad("an integer in [1, 65536]");
    } else if (name == "--batch-tokens") {
      if (!ParseInt(value, 0, kMax, &o->batch_tokens)) return bad("an integer >= 0");
    } else if (name == "--window") {
      if (!ParseInt(value, 1, 1 << 20, &o->window)) return bad("an integer in [1, 1048576]");
    } else if (name == "--prefix") {
      o->has_prefix = true;
      o->prefix = value;
    } else if (name == "--prefix-file") {
      if (value.empty()) return bad("a path");
      o->prefix_file = value;
    } else if (name == "--min-len") {
      if (!ParseInt(value, 0, kMax, &o->min_len)) return bad("an integer >= 0");
    } else if (name == "--top-k") {
      if (!ParseInt(value, 0, kMax, &o->top_k)) return bad("an integer >= 0");
      if (o->sampling_flag.empty()) o->sampling_flag = name;
    } else if (name == "--top-p") {
      if (!ParseFloat(value, &o->top_p) || !(o->top_p > 0.0f && o->top_p <= 1.0f)) {
        return bad("a number in (0, 1]");
      }
      if (o->sampling_flag.empty()) o->sampling_flag = name;
    } else if (name == "--temperature") {
      if (!ParseFloat(value, &o->temperature) || !(o->temperature > 0.0f)) {
        return bad("a finite number > 0");
      }
      if (o->sampling_flag.empty()) o->sampling_flag = name;
    } else if (name == "--seed") {
      if (!ParseUint64(value, &o->seed)) return bad("an integer in [0, 2^64)");
      if (o->sampling_flag.empty()) o->sampling_flag = name;
    } else if (name == "--fp16") {
      if (value != "auto" && value != "off" && value != "require") return bad("auto, off or require");
      o->fp16 = value;
    }
  }
  if (o->help || o->version) return true;
  if (o->model_path.empty()) {
    *error = "missing -m MODEL.hwm";
    return false;
  }
  if (o->nbest > o->beam) {
    *error = "--nbest " + std::to_string(o->nbest) + " exceeds --beam " + std::to_string(o->beam);
    return false;
  }
  if (o->has_prefix && !o->prefix_file.empty()) {
    *error = "--prefix and --prefix-file do not combine (one prefix for every line, or one per "
             "line)";
    return false;
  }
  if (o->split_sentences && (o->has_prefix || !o->prefix_file.empty())) {
    *error = "--split-sentences does not combine with --prefix / --prefix-file (a line's "
             "sentences have no one start)";
    return false;
  }
  if (!o->sample && !o->sampling_flag.empty()) {
    *error = o->sampling_flag + " applies only to sampling: add --sample";
    return false;
  }
  if (o->sample && o->beam != 1) {
    *error = "--sample needs --beam 1 (found --beam " + std::to_string(o->beam) + ")";
    return false;
  }
  if (o->split_sentences && o->nbest != 1) {
    *error = "--split-sentences needs --nbest 1 (the sentences' n-best lists do not combine into "
             "one for the line)";
    return false;
  }
  return true;
}

}  // namespace headwise::cli
