package manifest

// Name checks: the characters a label or a value that labels reports may hold.

import (
	"strconv"
	"strings"
	"unicode"
)

// checkName refuses control characters (newline, NUL, escape…) in a name that labels
// reports and tables: they would break report.md and terminal output. Bidirectional
// controls (U+202E, right-to-left override, …) are refused too: they reorder how the text
// after them is shown, so a label could display as another.
func checkName(m *Manifest, field, name string) error {
	for _, r := range name {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return m.ErrAt(field, "%s holds the control character %s: names label reports and tables, use printable characters", strconv.Quote(name), strconv.QuoteRune(r))
		}
		if unicode.Is(unicode.Bidi_Control, r) {
			return m.ErrAt(field, "%s holds the bidirectional control character %U: it reorders how the name is shown, so one label could look like another; remove it",
				strconv.Quote(name), r)
		}
	}
	return nil
}

// checkLabel is checkName for the manifest's and methods' names, which also name folders
// and files: no space may begin or end one ("fedavg " would look like "fedavg").
func checkLabel(m *Manifest, field, name string) error {
	if err := checkName(m, field, name); err != nil {
		return err
	}
	if strings.TrimSpace(name) != name {
		return m.ErrAt(field, "%s begins or ends with a space: it would look like %q in reports; remove the space", strconv.Quote(name), strings.TrimSpace(name))
	}
	return nil
}

// Nearest returns the candidate closest to s by edit distance when it is close enough to be
// a plausible typo of it, else "".
func Nearest(s string, candidates []string) string { return nearest(s, candidates) }
