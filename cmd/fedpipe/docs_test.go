package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation's command lines and links are checked against the CLI and the files
// (TestDocs): README.md and docs/*.md.

// docCommand is one `fedpipe …` command line found in a document.
type docCommand struct {
	file string
	line int
	text string // from "fedpipe" on, comments and continuations joined
}

// docFences are the fenced blocks whose lines may be fedpipe commands.
var docFences = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true}

// docPrefixes are how a document may spell the program.
var docPrefixes = []string{"./bin/fedpipe-xla ", "bin/fedpipe-xla ", "fedpipe-xla ", "./bin/fedpipe ", "bin/fedpipe ", "fedpipe "}

// docCommands returns the fedpipe command lines of a markdown document: lines of shell
// code blocks (with `\` continuations and indented `[…]` synopsis lines joined, and `#`
// comments dropped), and inline code spans outside blocks, each split at `&&`, `;` and a
// `|` outside brackets.
func docCommands(file, text string) []docCommand {
	var out []docCommand
	add := func(line int, s string) {
		for _, seg := range splitShell(s) {
			seg = strings.TrimSpace(seg)
			for _, p := range docPrefixes {
				if strings.HasPrefix(seg+" ", p) {
					out = append(out, docCommand{file, line, "fedpipe " + strings.TrimSpace(strings.TrimPrefix(seg+" ", p))})
					break
				}
			}
		}
	}
	lines := strings.Split(text, "\n")
	var prose strings.Builder
	proseLine := make([]int, 0, len(text)) // byte offset in prose → line number
	inFence, shell := false, false
	cur, curLine := "", 0
	flush := func() {
		if cur != "" {
			add(curLine, cur)
		}
		cur = ""
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			flush()
			if !inFence {
				inFence, shell = true, docFences[strings.TrimSpace(strings.TrimPrefix(t, "```"))]
			} else {
				inFence = false
			}
			continue
		}
		if !inFence {
			prose.WriteString(l + "\n")
			for range len(l) + 1 {
				proseLine = append(proseLine, i+1)
			}
			continue
		}
		if !shell {
			continue
		}
		code := strings.TrimSpace(stripComment(l))
		switch {
		case cur != "" && strings.HasSuffix(cur, "\\"):
			cur = strings.TrimSuffix(cur, "\\") + " " + code
		case cur != "" && l != strings.TrimLeft(l, " \t") && strings.HasPrefix(code, "["):
			cur += " " + code // a synopsis's indented continuation
		case cur != "" && code == "":
			// an indented comment line
		default:
			flush()
			cur, curLine = code, i+1
		}
	}
	flush()
	p := prose.String()
	for _, sp := range codeSpans(p) {
		add(proseLine[sp[0]], strings.Join(strings.Fields(p[sp[0]:sp[1]]), " "))
	}
	return out
}

// codeSpans returns the [start, end) offsets of the markdown code spans in text: a run of
// n backticks opens one and the next run of exactly n closes it (a span may hold shorter
// runs, as a span quoting a message with code in it does, and run over a line break).
func codeSpans(text string) [][2]int {
	var out [][2]int
	run := func(i int) int { // length of the backtick run at i
		j := i
		for j < len(text) && text[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := run(i)
		start, closed := i+n, false
		for j := start; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			if m := run(j); m == n {
				out = append(out, [2]int{start, j})
				i, closed = j+m, true
				break
			} else {
				j += m
			}
		}
		if !closed {
			i = start // an unmatched run is literal backticks
		}
	}
	return out
}

// stripComment drops a shell comment: a `#` at the start or after a blank, outside quotes.
func stripComment(l string) string {
	var q rune
	for i, c := range l {
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}

// splitShell cuts a line at `&&`, `;` and `|` outside quotes and brackets (a synopsis's
// `[--a | --b]` stays whole).
func splitShell(s string) []string {
	var out []string
	var q rune
	depth, start := 0, 0
	for i, c := range s {
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '[':
			depth++
		case c == ']':
			depth = max(0, depth-1)
		case depth == 0 && (c == ';' || c == '|'):
			out, start = append(out, s[start:i]), i+1
		case depth == 0 && c == '&' && strings.HasPrefix(s[i:], "&&"):
			out, start = append(out, s[start:i]), i+2
		}
	}
	return append(out, s[start:])
}

// docFlag matches a flag token: --name (up to `=`) or -x, after a blank or one of `[(|`.
var docFlag = regexp.MustCompile(`(?:^|[\s\[(|])(--?[A-Za-z][A-Za-z0-9-]*)`)

// placeholder matches a subcommand written as a placeholder (COMMAND, …).
var placeholder = regexp.MustCompile(`^[A-Z_.…]+$`)

// helpFlag matches a flag in pflag's usage lines: "  -S, --set …" or "      --store …".
var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-([A-Za-z]), )?--([A-Za-z0-9][A-Za-z0-9-]*)`)

// cliFlags returns the flags a subcommand accepts, read from its --help output (long names
// as "--name", shorthands as "-x"), or an error for an unknown subcommand.
func cliFlags(sub string, cache map[string]map[string]bool) (map[string]bool, error) {
	if f, ok := cache[sub]; ok {
		return f, nil
	}
	var out, errb bytes.Buffer
	if code := run([]string{sub, "--help"}, &out, &errb); code != exitOK {
		return nil, fmt.Errorf("no subcommand %q (fedpipe %s --help: exit %d: %s)", sub, sub, code, firstLine(errb.String()))
	}
	flags := map[string]bool{"--help": true, "-h": true}
	for _, m := range helpFlag.FindAllStringSubmatch(out.String(), -1) {
		if m[1] != "" {
			flags["-"+m[1]] = true
		}
		flags["--"+m[2]] = true
	}
	cache[sub] = flags
	return flags, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// checkCommand says what in a documented command line the CLI does not accept: an unknown
// subcommand, or a flag that subcommand lacks. A subcommand written as a placeholder
// (COMMAND) is not checked.
func checkCommand(c docCommand, cache map[string]map[string]bool) error {
	fields := strings.Fields(strings.TrimPrefix(c.text, "fedpipe "))
	if len(fields) == 0 {
		return nil
	}
	sub := strings.Trim(fields[0], "`'\".,:;)")
	switch {
	case sub == "--version":
		sub = "version"
	case sub == "--help" || sub == "-h":
		sub = "help"
	case placeholder.MatchString(sub):
		return nil
	}
	flags, err := cliFlags(sub, cache)
	if err != nil {
		return err
	}
	rest := strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(c.text, "fedpipe ")), fields[0])
	var bad []string
	for _, m := range docFlag.FindAllStringSubmatch(rest, -1) {
		f := m[1]
		if !strings.HasPrefix(f, "--") && len(f) > 2 {
			f = f[:2] // -Sx: the shorthand -S with its value
		}
		if !flags[f] {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("fedpipe %s has no flag %s", sub, strings.Join(bad, ", "))
	}
	return nil
}

// mdLink matches a markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkLinks returns an error for every relative link in the markdown file at path (with
// text) whose file does not exist, or whose #anchor names no heading of the target.
func checkLinks(path, text string) []error {
	var errs []error
	inFence := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				if st, serr := os.Stat(dest); serr == nil && st.IsDir() && anchor == "" {
					continue // a link to a folder
				}
				errs = append(errs, fmt.Errorf("%s:%d: link %s: no file %s", path, i+1, target, dest))
				continue
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !headingAnchors(string(b))[anchor] {
				errs = append(errs, fmt.Errorf("%s:%d: link %s: %s has no heading #%s", path, i+1, target, dest, anchor))
			}
		}
	}
	return errs
}

// headingAnchors returns the anchors GitHub gives a document's headings: lower case,
// punctuation other than `-` and `_` dropped, blanks as `-`.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, c := range h {
			switch {
			case c == ' ':
				b.WriteRune('-')
			case c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c > 127 && c != '—' && c != '–' && c != '…':
				b.WriteRune(c)
			}
		}
		out[b.String()] = true
	}
	return out
}

// docFiles returns README.md and docs/*.md, relative to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, files...)
}

// TestDocs: every `fedpipe …` command line in README.md and docs/*.md names a subcommand
// that exists with flags it has (from its --help), and every relative link resolves to a
// file (and heading); the checker itself catches a bogus flag, subcommand and link.
func TestDocs(t *testing.T) {
	cache := map[string]map[string]bool{}
	t.Run("checker", func(t *testing.T) {
		doc := "Run it:\n\n```sh\nfedpipe run m.yaml --store DIR \\\n  --bogus-flag 3   # no such flag\nfedpipe status m.yaml -S train.lr=0.1 && fedpipe nosuch m.yaml\n" +
			"fedpipe run MANIFEST [--store DIR]\n            [--json | --not-a-flag]\n```\n\n" +
			"Inline: `fedpipe ls m.yaml\n--csv --jsonl`, a [link](no-such-page.md) and one to [a heading](commands.md#no-such-heading).\n" +
			"A quoted message: ``waiting for `fedpipe gc --no-such` to finish``; `fedpipe version --json`.\n"
		cmds := docCommands("synthetic.md", doc)
		var got []string
		for _, c := range cmds {
			if err := checkCommand(c, cache); err != nil {
				got = append(got, fmt.Sprintf("%d: %v", c.line, err))
			}
		}
		want := []string{
			"4: fedpipe run has no flag --bogus-flag",
			`6: no subcommand "nosuch"`,
			"7: fedpipe run has no flag --not-a-flag",
			"11: fedpipe ls has no flag --jsonl",
		}
		// The double-backtick span is a quoted message, one span: the code inside it is
		// not a command line, and the span after it is.
		if len(cmds) != 6 || len(got) != len(want) {
			t.Fatalf("%d commands, errors:\n%s\nwant:\n%s", len(cmds), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("error %d: %q, want it to start %q", i, got[i], want[i])
			}
		}
		links := checkLinks(filepath.Join("..", "..", "docs", "synthetic.md"), doc)
		if len(links) != 2 || !strings.Contains(fmt.Sprint(links[0]), "no file") || !strings.Contains(fmt.Sprint(links[1]), "no heading #no-such-heading") {
			t.Errorf("link errors %v, want a missing file and a missing heading", links)
		}
	})
	t.Run("files", func(t *testing.T) {
		n := 0
		for _, path := range docFiles(t) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range docCommands(path, string(b)) {
				n++
				if err := checkCommand(c, cache); err != nil {
					t.Errorf("%s:%d: %s\n\t%v", c.file, c.line, c.text, err)
				}
			}
			for _, err := range checkLinks(path, string(b)) {
				t.Error(err)
			}
		}
		t.Logf("%d command lines checked", n)
		if n < 50 {
			t.Errorf("only %d command lines found in the docs: the extraction is broken", n)
		}
	})
}
