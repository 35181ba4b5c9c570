// The scalability report's explanation in words: why a strategy does not scale better (from the
// loss attribution of analysis/scalability.h) and which strategy is fastest at each scale. Plain
// text; every output form (console, JSON, HTML) shows the same sentences.
#pragma once

#include <string>
#include <vector>

#include "analysis/scalability.h"

namespace scaleprof::report {

using analysis::ScalabilityAnalysis;
using analysis::SeriesResult;

// What a cause of lost efficiency is and what grew, in a few words (the JSON causes' `detail`, the
// sentences): the operators whose time grew most for computation, the rank the others waited for,
// what the part of the step holds for the others; "" for a cause the basis says nothing more about.
std::string cause_detail(const analysis::LossCause& cause, const analysis::ScaleLoss& loss);

// What fixing a cause means in the what-if model (the JSON gains' `detail`): "rank 1's work capped at
// the other ranks' median", "computation scaled to 0.62 of its time (shrunk with the workers)", ...
std::string gain_detail(const analysis::CauseGain& gain, const analysis::ScaleLoss& loss);

// Sentences explaining where the efficiency of one strategy was lost; empty without two scales.
std::vector<std::string> loss_sentences(const SeriesResult& series);

// Per strategy with a configuration that failed: "ddp: baseline is 2 workers, its smallest scale that
// completed; 1 worker failed (exit 1, log PATH)." Empty when nothing failed.
std::vector<std::string> failure_sentences(const ScalabilityAnalysis& analysis);

// "At N workers X is fastest (...), P% faster than Y (...)." for each scale with several strategies.
std::vector<std::string> best_strategy_sentences(const ScalabilityAnalysis& analysis);

}  // namespace scaleprof::report
