package report

import (
	"fmt"
	"html/template"
)

// Long values are folded: an operation's value (a final read of a set
// holds thousands of elements), a figure's JSON, a cell of a figure's
// table. A value longer than foldAt shows its first foldShown characters
// and opens, in a <details>, to the whole of it (up to maxFolded, past
// which it is cut with an ellipsis); the page's CSS wraps every value
// anywhere, so that none, folded or not, makes the page scroll sideways.

const (
	foldAt    = 240
	foldShown = 160
	maxFolded = 64 << 10 // characters a folded value keeps
)

// fold renders s for the page: as it is when it is short, else folded.
func fold(s string) template.HTML {
	r := []rune(s)
	if len(r) <= foldAt {
		return template.HTML(esc(s))
	}
	whole := s
	if len(r) > maxFolded {
		whole = string(r[:maxFolded-1]) + "…"
	}
	return template.HTML(fmt.Sprintf(`<details class="fold"><summary>%s… <span class="fold-more">(%d characters: show all)</span></summary><div class="folded">%s</div></details>`,
		esc(string(r[:foldShown])), len(r), esc(whole)))
}
