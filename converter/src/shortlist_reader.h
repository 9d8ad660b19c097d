// converter/src/shortlist_reader.h: reads the vocabulary shortlist file that `headwise-train
// shortlist` writes (`headwise-convert --shortlist FILE`) into the IR's ShortlistSpec
// (format/shortlist.h), checked against the checkpoint's vocabulary.
//
// The file (UTF-8 text, one record per line, fields separated by one TAB, lines ending in
// "\n"; empty lines and lines starting with '#' are ignored):
//     headwise-shortlist <TAB> 1                       the first record: format and version
//     vocab_size <TAB> N                               the vocabulary's size
//     vocab_sha256 <TAB> HEX                           SHA-256 of the vocabulary's pieces in id
//                                                      order, each followed by one NUL byte
//     description <TAB> TEXT                           optional, stored in the model file
//     KEY <TAB> VALUE                                  any other key: informational, ignored
//     frequent <TAB> ID ID ...                         once: ids always allowed (may be empty)
//     source <TAB> SOURCE_ID <TAB> ID ID ...           one per source id with a list, source ids
//                                                      strictly ascending; ids best first
// after the header records (all before `frequent`). IDs are decimal, separated by single spaces,
// unique within their record, < N. The lists may be in any order (the trainer writes them best
// first); the spec holds them ascending. Every source id without a record has an empty list.
//
// Errors: kInvalidCheckpoint "<where>:<line>: <what was expected>, found <what>", including a
// vocabulary other than the checkpoint's (size or hash); kIoError when the file cannot be read.
#ifndef HEADWISE_CONVERTER_SHORTLIST_READER_H_
#define HEADWISE_CONVERTER_SHORTLIST_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "format/shortlist.h"
#include "headwise/status.hpp"

namespace headwise::convert {

// The vocabulary hash the file's vocab_sha256 record holds, of pieces[id] in id order.
std::string ShortlistVocabHash(const std::vector<std::string>& pieces);

// `pieces`: the checkpoint's vocabulary (vocab.json, id order). `where` prefixes messages.
Result<ShortlistSpec> ParseShortlist(std::string_view text, const std::string& where,
                                     const std::vector<std::string>& pieces);

// Reads `path` and parses it as above.
Result<ShortlistSpec> ReadShortlist(const std::string& path,
                                    const std::vector<std::string>& pieces);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_SHORTLIST_READER_H_
