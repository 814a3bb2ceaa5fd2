package manifest

// What a paper concludes from a table, as checkable claims: the `claims:` section.

import (
	"fmt"
	"slices"
	"strings"
)

// The kinds of claim.
const (
	// ClaimBest: Method is the best of the column (the paper's bold) among Than, or among
	// every other method of the manifest when Than is empty.
	ClaimBest = "best"
	// ClaimAbove: Method is above each method of Than, by more than Margin points.
	ClaimAbove = "above"
	// ClaimOrder: the methods of Order, highest first, each above the next.
	ClaimOrder = "order"
	// ClaimWithin: Method is no worse than each method of Than by more than Margin points.
	ClaimWithin = "within"
)

// Claim is one conclusion a paper draws from a table: an ordering of methods on a metric,
// in every cell of the grid. Like an expectation it changes no key; `fedpipe verify`,
// `reproduced` and `report` give it a verdict from the results at hand (holds, reversed,
// undecided, not computable yet). See docs/manifests.md.
type Claim struct {
	// Kind is best, above, order or within.
	Kind string `yaml:"kind" check:"oneof=best|above|order|within" json:"kind,omitempty"`
	// Method is the label of the method the claim is about (best, above, within).
	Method string `yaml:"method" json:"method,omitempty"`
	// Than are the labels it is compared with (above, within: at least one; best: the
	// column's other methods, default every other method of the manifest).
	Than []string `yaml:"than" json:"than,omitempty"`
	// Order are the labels of an ordering claim, highest first (at least two).
	Order []string `yaml:"order" json:"order,omitempty"`
	// Metric is the figure compared, as an expectation names it (accuracy metrics only).
	Metric string `yaml:"metric" check:"oneof=final_client_mean|final_pooled|best_client_mean|best_pooled|final_client_mean_ft|final_pooled_ft|best_client_mean_ft|best_pooled_ft" json:"metric,omitempty"`
	// Margin is, in points, how far above (above) the paper says the method is, or how
	// much worse it may be (within); 0 where the paper gives none.
	Margin float64 `yaml:"margin" check:"ge0" json:"margin,omitempty"`
	// Source is where the paper makes the claim: its table, and whether the claim is the
	// table's bold, its underline, or a sentence of the text.
	Source string `yaml:"source" json:"source,omitempty"`
	// Text is the paper's statement, paraphrased, where the source is its text.
	Text string `yaml:"text" json:"text,omitempty"`
	// Shift and Level compare the shift stage's figures at that shift and level, as an
	// expectation's do (final_client_mean or final_pooled only); empty: unshifted.
	Shift string  `yaml:"shift" json:"shift,omitempty"`
	Level float64 `yaml:"level" check:"ge0" json:"level,omitempty"`
}

// Pairs are the comparisons a claim rests on: (higher, lower) labels, the first claimed
// above the second (by Margin for above, no worse than −Margin for within).
func (c Claim) Pairs(labels []string) [][2]string {
	var out [][2]string
	switch c.Kind {
	case ClaimOrder:
		for i := 0; i+1 < len(c.Order); i++ {
			out = append(out, [2]string{c.Order[i], c.Order[i+1]})
		}
	case ClaimBest:
		than := c.Than
		if len(than) == 0 {
			than = labels
		}
		for _, t := range than {
			if t != c.Method {
				out = append(out, [2]string{c.Method, t})
			}
		}
	default:
		for _, t := range c.Than {
			out = append(out, [2]string{c.Method, t})
		}
	}
	return out
}

// Threshold is the least difference (higher − lower, in points) the claim asserts: the
// margin of an above claim, minus the margin of a within claim, 0 otherwise.
func (c Claim) Threshold() float64 {
	switch c.Kind {
	case ClaimAbove:
		return c.Margin
	case ClaimWithin:
		return -c.Margin
	}
	return 0
}

// Describe says the claim in words: "fedobp is the best of the column (best_pooled)".
func (c Claim) Describe() string {
	var s string
	switch c.Kind {
	case ClaimBest:
		s = c.Method + " is the best of the column"
		if len(c.Than) > 0 {
			s += " (of " + strings.Join(append([]string{c.Method}, c.Than...), ", ") + ")"
		}
	case ClaimAbove:
		s = c.Method + " is above " + strings.Join(c.Than, ", ")
		if c.Margin > 0 {
			s += fmt.Sprintf(" by more than %.2f", c.Margin)
		}
	case ClaimOrder:
		s = strings.Join(c.Order, " > ")
	case ClaimWithin:
		s = fmt.Sprintf("%s is no worse than %s by more than %.2f", c.Method, strings.Join(c.Than, ", "), c.Margin)
	}
	if c.Shift != "" {
		return s + fmt.Sprintf(" (%s, shift %s %v)", c.Metric, c.Shift, c.Level)
	}
	return s + " (" + c.Metric + ")"
}

// validateClaims checks each claim's methods against the manifest's labels, at the line
// of the field that names an unknown one.
func (m *Manifest) validateClaims(seen map[string]int) error {
	var labels []string
	for _, ms := range m.Methods {
		labels = append(labels, ms.Name)
	}
	known := func(field, label string) error {
		if _, ok := seen[label]; ok {
			return nil
		}
		msg := fmt.Sprintf("no method labelled %q in this manifest (methods: %s)", label, strings.Join(labels, ", "))
		if near := nearest(label, labels); near != "" {
			msg = fmt.Sprintf("no method labelled %q in this manifest (did you mean %q?)", label, near)
		}
		return m.ErrAt(field, "%s", msg)
	}
	for i, c := range m.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		if c.Kind == "" {
			return m.ErrAt(f, "kind missing: one of best, above, order, within")
		}
		if c.Metric == "" {
			return m.ErrAt(f, "metric missing: one of final_client_mean, final_pooled, best_client_mean, best_pooled (or their _ft)")
		}
		if c.Source == "" {
			return m.ErrAt(f, "source missing: the table, and whether the claim is its bold, underline or text")
		}
		if err := m.checkShiftExpectation(f, Expectation{Metric: c.Metric, Shift: c.Shift, Level: c.Level}); err != nil {
			return err
		}
		if c.Kind == ClaimOrder {
			if len(c.Order) < 2 || c.Method != "" || len(c.Than) > 0 {
				return m.ErrAt(f+".order", "an order claim lists two or more methods in order, highest first, and no method or than")
			}
			for j, l := range c.Order {
				if err := known(fmt.Sprintf("%s.order[%d]", f, j), l); err != nil {
					return err
				}
				if slices.Index(c.Order, l) < j {
					return m.ErrAt(fmt.Sprintf("%s.order[%d]", f, j), "method %q listed twice", l)
				}
			}
			continue
		}
		if len(c.Order) > 0 {
			return m.ErrAt(f+".order", "only an order claim lists order")
		}
		if c.Method == "" {
			return m.ErrAt(f, "method missing: the label the %s claim is about", c.Kind)
		}
		if err := known(f+".method", c.Method); err != nil {
			return err
		}
		if c.Kind != ClaimBest && len(c.Than) == 0 {
			return m.ErrAt(f, "than missing: the methods an %s claim compares %s with", c.Kind, c.Method)
		}
		if c.Margin > 0 && c.Kind != ClaimAbove && c.Kind != ClaimWithin {
			return m.ErrAt(f+".margin", "only above and within claims take a margin")
		}
		for j, l := range c.Than {
			if err := known(fmt.Sprintf("%s.than[%d]", f, j), l); err != nil {
				return err
			}
			if l == c.Method {
				return m.ErrAt(fmt.Sprintf("%s.than[%d]", f, j), "a method cannot be compared with itself")
			}
		}
	}
	return nil
}
