#include "report/table_layout.h"

#include <algorithm>

#include "report/name_shorten.h"

namespace scaleprof::report {

namespace {

constexpr size_t kGap = 2;  // spaces between columns

// Width of a line holding these columns side by side.
size_t line_width(const std::vector<size_t>& widths) {
  size_t total = 0;
  for (size_t w : widths) total += w + kGap;
  return total >= kGap ? total - kGap : 0;
}

// Narrows text columns until a line fits `max_width`: every shrinkable column wider than a cap is
// cut to the cap, with the cap as high as still fits (the widest names lose the most), never below
// kMinShortenedWidth nor the column's `floor` (its header).
void fit_width(std::vector<size_t>* width, const std::vector<bool>& shrinkable, const std::vector<size_t>& floor,
               size_t max_width) {
  const size_t total = line_width(*width);
  if (max_width == 0 || total <= max_width) return;
  size_t widest = 0;
  for (size_t i = 0; i < width->size(); ++i) {
    if (shrinkable[i]) widest = std::max(widest, (*width)[i]);
  }
  // The excess over the cap, summed over the columns the cap cuts.
  auto cut = [&](size_t cap) {
    size_t sum = 0;
    for (size_t i = 0; i < width->size(); ++i) {
      const size_t lowest = std::max(cap, floor[i]);
      if (shrinkable[i] && (*width)[i] > lowest) sum += (*width)[i] - lowest;
    }
    return sum;
  };
  const size_t excess = total - max_width;
  size_t lo = kMinShortenedWidth, hi = std::max(widest, kMinShortenedWidth);  // the answer lies in [lo, hi]
  if (cut(lo) < excess) {
    hi = lo;  // cannot fit: narrow as far as allowed
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (cut(mid) >= excess) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  for (size_t i = 0; i < width->size(); ++i) {
    if (shrinkable[i]) (*width)[i] = std::min((*width)[i], std::max(lo, floor[i]));
  }
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = std::min(text.find(' ', pos), text.size());
    if (space > pos) words.push_back(text.substr(pos, space - pos));
    pos = space + 1;
  }
  return words;
}

// A title over as few columns as it can take in kMaxHeaderLines lines, but no fewer than `target`
// (its values' width: a title narrower than them gains nothing by wrapping).
std::vector<std::string> wrap_title(const std::string& title, size_t target) {
  const size_t whole = display_width(title);
  if (whole <= target) return {title};
  size_t longest = 0;
  for (std::string_view w : words_of(title)) longest = std::max(longest, display_width(w));
  for (size_t width = std::max(target, longest); width < whole; ++width) {
    std::vector<std::string> lines = wrap_words(title, width);
    if (lines.size() <= kMaxHeaderLines) return lines;
  }
  return {title};
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view text, size_t width) {
  if (width == 0 || display_width(text) <= width) return {std::string(text)};
  std::vector<std::string> lines;
  std::string line;
  size_t line_w = 0;
  for (std::string_view word : words_of(text)) {
    const size_t w = display_width(word);
    if (!line.empty() && line_w + 1 + w > width) {
      lines.push_back(std::move(line));
      line.clear();
      line_w = 0;
    }
    if (!line.empty()) {
      line += ' ';
      ++line_w;
    }
    line += word;
    line_w += w;
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

TableLayout plan_table_layout(const std::vector<ColumnMeasure>& columns, size_t max_width, bool wide, bool full_names) {
  const size_t n = columns.size();
  std::vector<size_t> title_width(n), natural(n), all(n);
  std::vector<bool> shrinkable(n);
  for (size_t i = 0; i < n; ++i) {
    title_width[i] = display_width(columns[i].title);
    natural[i] = std::max(title_width[i], columns[i].cells);
    shrinkable[i] = !columns[i].numeric && !full_names;  // numbers are never cut
    all[i] = i;
  }
  TableLayout layout;
  // A part with the given columns at the widths given, names then narrowed to fit.
  auto part_of = [&](const std::vector<size_t>& cols, const std::vector<size_t>& width,
                     const std::vector<std::vector<std::string>>& header) {
    TablePart part;
    part.columns = cols;
    std::vector<bool> shrink;
    std::vector<size_t> floor;
    for (size_t c : cols) {
      part.width.push_back(width[c]);
      shrink.push_back(shrinkable[c]);
      size_t head = 0;
      for (const std::string& line : header[c]) head = std::max(head, display_width(line));
      floor.push_back(head);
      part.header_lines = std::max(part.header_lines, header[c].size());
    }
    fit_width(&part.width, shrink, floor, max_width);
    for (size_t c : cols) {
      std::vector<std::string> lines(part.header_lines - header[c].size());  // blank lines on top
      lines.insert(lines.end(), header[c].begin(), header[c].end());
      part.header.push_back(std::move(lines));
    }
    return part;
  };
  std::vector<std::vector<std::string>> one_line(n);
  for (size_t i = 0; i < n; ++i) one_line[i] = {columns[i].title};
  if (max_width == 0 || wide || line_width(natural) <= max_width) {
    layout.parts.push_back(part_of(all, natural, one_line));
    return layout;
  }

  // 1. Headers wrapped; the narrowest each column can get once names are narrowed too.
  std::vector<std::vector<std::string>> header(n);
  std::vector<size_t> wrapped(n), narrowest(n);
  for (size_t i = 0; i < n; ++i) {
    header[i] = wrap_title(columns[i].title, columns[i].cells);
    size_t head = 0;
    for (const std::string& line : header[i]) head = std::max(head, display_width(line));
    wrapped[i] = std::max(head, columns[i].cells);
    narrowest[i] = shrinkable[i] ? std::max(head, std::min(columns[i].cells, kMinShortenedWidth)) : wrapped[i];
  }
  auto narrowest_line = [&](const std::vector<size_t>& cols) {
    std::vector<size_t> w;
    for (size_t c : cols) w.push_back(narrowest[c]);
    return line_width(w);
  };

  // 2-3. Columns left out, the least important first and of those the rightmost, until the rest fit
  // with names at their narrowest; names are then narrowed only as far as the kept columns need.
  std::vector<size_t> kept = all;
  while (narrowest_line(kept) > max_width) {
    size_t drop = kept.size();
    for (size_t k = kept.size(); k-- > 0;) {
      const Importance imp = columns[kept[k]].importance;
      if (imp >= Importance::kUseful && (drop == kept.size() || imp > columns[kept[drop]].importance)) drop = k;
    }
    if (drop == kept.size()) break;
    layout.dropped.push_back(kept[drop]);
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  std::sort(layout.dropped.begin(), layout.dropped.end());
  if (narrowest_line(kept) <= max_width) {
    layout.parts.push_back(part_of(kept, wrapped, header));
    return layout;
  }

  // 4. Folded: the key columns (or the first, when none is marked) start every part; the others
  // follow in table order, a new part starting where the next column would not fit.
  std::vector<size_t> keys;
  for (size_t c : kept) {
    if (columns[c].importance == Importance::kKey) keys.push_back(c);
  }
  if (keys.empty() && !kept.empty()) keys.push_back(kept.front());
  std::vector<size_t> current = keys;
  bool has_other = false;
  for (size_t c : kept) {
    if (std::find(keys.begin(), keys.end(), c) != keys.end()) continue;
    std::vector<size_t> with = current;
    with.insert(std::upper_bound(with.begin(), with.end(), c), c);
    if (has_other && narrowest_line(with) > max_width) {
      layout.parts.push_back(part_of(current, wrapped, header));
      with = keys;
      with.insert(std::upper_bound(with.begin(), with.end(), c), c);
    }
    current = std::move(with);
    has_other = true;
  }
  layout.parts.push_back(part_of(current, wrapped, header));
  return layout;
}

}  // namespace scaleprof::report
