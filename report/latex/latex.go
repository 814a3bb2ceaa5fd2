// Package latex writes the report's LaTeX: the results table as a booktabs table with its
// significance marks and test-set intervals (Results), and a figure environment per report
// figure (Figures). It reads the report's stored tables; it never links the trainer.
package latex

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/report/site"
)

// Results renders the report's results table (method × cell, mean ± std over seeds) as
// a booktabs LaTeX table that goes into a paper as it is: the best mean of each column in
// bold, cells not computed as "--", labelled tab:<name> (name: the manifest's, see Label),
// a final newline. The caption says what the numbers are (the metric, the population std
// over seeds, ddof = 0, as everywhere in fedpipe's report) and explains a mark only where a
// cell carries it (sigCaption); the manifest's name stays in a comment above the table.
func Results(t *table.Table, name string) (string, error) {
	method, cell, seeds, mean, std := t.Col("method"), t.Col("cell"), t.Col("seeds"), t.Col("mean_pct"), t.Col("std_pct")
	if method == nil || cell == nil || seeds == nil || mean == nil || std == nil {
		return "", fmt.Errorf("latex: the results table lacks its columns")
	}
	if d := t.Col("display"); d != nil { // the methods as their papers write them, as the page does
		method = d
	}
	var rows, cols []string
	seenR, seenC := map[string]bool{}, map[string]bool{}
	type val struct {
		mean, std float64
		n         int64
		sig       sig
	}
	vals := map[[2]string]val{}
	for i, r := range method.String {
		c := cell.String[i]
		if !seenR[r] {
			seenR[r] = true
			rows = append(rows, r)
		}
		if !seenC[c] {
			seenC[c] = true
			cols = append(cols, c)
		}
		vals[[2]string{r, c}] = val{mean.Float64[i], std.Float64[i], seeds.Int64[i], sigOf(t, i)}
	}
	best := map[string]float64{}
	for k, v := range vals {
		if b, ok := best[k[1]]; v.n > 0 && (!ok || v.mean > b) {
			best[k[1]] = v.mean
		}
	}
	var b strings.Builder
	metric := t.Meta["metric"]
	var used []sig
	for _, v := range vals {
		if v.n > 0 {
			s := v.sig
			s.oneSeed = v.n == 1
			used = append(used, s)
		}
	}
	fmt.Fprintf(&b, "%% fedpipe report: %s\n%% requires \\usepackage{booktabs}\n", strings.ReplaceAll(name, "\n", " "))
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(&b, "\\caption{%s (\\%%): mean $\\pm$ population standard deviation over seeds (number of seeds in parentheses); the best mean of each column in bold.%s}\n",
		metricText(metric), sigCaption(t, used))
	fmt.Fprintf(&b, "\\label{%s}\n", Label(name))
	fmt.Fprintf(&b, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("c", len(cols)))
	head := []string{"Method"}
	for _, c := range cols {
		if c == "" {
			c = "Accuracy (\\%)"
		} else {
			c = escape(c)
		}
		head = append(head, c)
	}
	b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for _, r := range rows {
		line := []string{escape(r)}
		for _, c := range cols {
			v, ok := vals[[2]string{r, c}]
			switch {
			case !ok || v.n == 0:
				line = append(line, "--")
			default:
				s := fmt.Sprintf("%.2f", v.mean)
				if v.mean == best[c] {
					s = "\\textbf{" + s + "}"
				}
				line = append(line, s+v.sig.cell(v.std, v.n))
			}
		}
		b.WriteString(strings.Join(line, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
	return b.String(), nil
}

// Label is the results table's \\label: "tab:" and the manifest's name, each character
// that is not a letter, a digit, "-", "." or ":" as "-" (tab:quickstart,
// tab:fedobp-table1).
func Label(name string) string {
	return "tab:" + strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.' || r == ':') {
			return r
		}
		return '-'
	}, name)
}

// metricText says in words what a metric's numbers are, capitalized for a caption's start.
func metricText(metric string) string {
	switch metric {
	case "final_client_mean", "":
		return "Final test accuracy, mean over clients"
	case "final_pooled":
		return "Final test accuracy, pooled over the clients' test samples"
	case "best_client_mean":
		return "Best test accuracy over the evaluation rounds, mean over clients"
	case "best_pooled":
		return "Best test accuracy over the evaluation rounds, pooled over the clients' test samples"
	}
	return "Test accuracy (" + escape(strings.ReplaceAll(metric, "_", " ")) + ")"
}

// escape escapes LaTeX's special characters in text.
func escape(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`,
		"{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`, "α", `$\alpha$`, "β", `$\beta$`, "±", `$\pm$`, "×", `$\times$`, "−", `$-$`)
	return r.Replace(s)
}

// Figures writes one LaTeX figure per report figure, including its PDF
// (figures/<name>.pdf, relative to the report directory) with its caption and a label
// fig:<name>.
func Figures(figs []site.Figure) string {
	var b strings.Builder
	b.WriteString("% fedpipe report: the figures as PDF\n% requires \\usepackage{graphicx}; the paths are relative to the report directory\n% (\\input this file from there, or set \\graphicspath{{DIR/}})\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "\n\\begin{figure}[t]\n\\centering\n\\includegraphics[width=\\linewidth]{figures/%s.pdf}\n\\caption{%s}\n\\label{fig:%s}\n\\end{figure}\n",
			f.Name, escape(f.Caption), f.Name)
	}
	return b.String()
}
