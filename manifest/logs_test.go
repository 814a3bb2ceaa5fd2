package manifest

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// logsManifest is validManifest (3 rounds, methods fedavg and local) with a logs section
// whose entries the tests replace.
const logsManifest = validManifest + `logs:
  - method: fedavg
    source: "some/repo run/main.log"
    evals:
      - {round: 1, before: 80.5, after: 90.25, line: 532}
      - {round: 3, before: 81, line: 540}
`

func TestLogsParse(t *testing.T) {
	m, err := ParseManifest("m.yaml", []byte(logsManifest))
	if err != nil {
		t.Fatal(err)
	}
	l := m.LogOf("fedavg")
	if l == nil || len(l.Evals) != 2 || l.Source != "some/repo run/main.log" {
		t.Fatalf("LogOf(fedavg) = %+v", l)
	}
	if e := l.Evals[0]; e.Round != 1 || e.Before != 80.5 || e.After == nil || *e.After != 90.25 || e.Line != 532 {
		t.Errorf("evals[0] = %+v", e)
	}
	if l.Evals[1].After != nil {
		t.Errorf("an omitted after is %v, want nil (the run did not fine-tune)", *l.Evals[1].After)
	}
	if m.LogOf("local") != nil {
		t.Error("LogOf(local) found a log the manifest does not record")
	}
}

// TestLogsErrorsNamePlace: every bad log entry fails at its file:line and field, as an
// input error.
func TestLogsErrorsNamePlace(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, field, msg string
		line                       int
	}{
		{"unknown method", "  - method: fedavg", "  - method: fedavgg", "logs[0].method", `did you mean "fedavg"`, 15},
		{"no source", `    source: "some/repo run/main.log"`, `    source: ""`, "logs[0].source", "source missing", 16},
		{"rounds not increasing", "{round: 3, before: 81", "{round: 1, before: 81", "logs[0].evals[1].round", "rounds must increase", 19},
		{"round past training", "{round: 3, before: 81", "{round: 4, before: 81", "logs[0].evals[1].round", "past train.rounds (3)", 19},
		{"no line", ", line: 540}", "}", "logs[0].evals[1].line", "line missing", 19},
		{"not a percentage", "before: 81,", "before: 810,", "logs[0].evals[1].before", "not a percentage", 19},
		{"negative", "before: 81,", "before: -1,", "logs[0].evals[1].before", "", 19},
		{"after beyond 100", "after: 90.25", "after: 190.25", "logs[0].evals[0].after", "not a percentage", 18},
		{"unknown field", "before: 81,", "befor: 81,", "logs[0].evals[1]", "befor", 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(logsManifest, tc.old, tc.new, 1)
			if text == logsManifest {
				t.Fatalf("%q not in the manifest", tc.old)
			}
			_, err := ParseManifest("m.yaml", []byte(text))
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want an input error", err)
			}
			if ie.File != "m.yaml" || ie.Line != tc.line || !strings.HasPrefix(ie.Field, tc.field) || !strings.Contains(ie.Error(), tc.msg) {
				t.Errorf("err = %q (file %s line %d field %s), want m.yaml:%d at %s saying %q", ie.Error(), ie.File, ie.Line, ie.Field, tc.line, tc.field, tc.msg)
			}
		})
	}
	two := logsManifest + `  - method: fedavg
    source: x
    evals: [{round: 1, before: 1, line: 1}]
`
	_, err := ParseManifest("m.yaml", []byte(two))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "logs[1].method" || ie.Line != 20 || !strings.Contains(ie.Msg, "one log per method") {
		t.Errorf("a second log of fedavg: err = %v", err)
	}
}

func TestDeviationOf(t *testing.T) {
	text := logsManifest + `expect:
  - {method: fedavg, metric: final_pooled, published: 80, deviation: "final"}
  - {method: fedavg, metric: best_pooled, published: 80, deviation: "best"}
  - {method: local, metric: final_pooled, published: 80, deviation: "local's"}
`
	m, err := ParseManifest("m.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if d := m.DeviationOf("fedavg"); d != "best" {
		t.Errorf("DeviationOf(fedavg) = %q, want the best_pooled expectation's", d)
	}
	if d := m.DeviationOf("local"); d != "local's" {
		t.Errorf("DeviationOf(local) = %q", d)
	}
	m.Logs[0].Deviation = "the log's own"
	if d := m.DeviationOf("fedavg"); d != "the log's own" {
		t.Errorf("DeviationOf(fedavg) = %q, want the log entry's own first", d)
	}
}

// TestKeptFedOBPCellsHaveTheirLogs: every kept cell of FedOBP Tables 6 and 8 on FMNIST and
// MNIST (reproduced/cells) has a logs entry in its manifest: its method's authors' log, so
// the page shows each kept curve beside the logged one, or absent saying where the authors'
// logs were searched for one; and every logged figure lies within the rounds the manifest
// evaluates.
func TestKeptFedOBPCellsHaveTheirLogs(t *testing.T) {
	dirs, err := filepath.Glob("../reproduced/cells/fedobp-table[68]-*mnist*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		name := filepath.Base(d)
		if strings.Contains(name, "medmnist") {
			continue
		}
		m, err := LoadManifest(filepath.Join("../manifests", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		trains, _ := filepath.Glob(filepath.Join(d, "train%20*.json"))
		for _, f := range trains {
			label, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(f), "train%20"), "%20")
			n++
			l := m.LogOf(label)
			if l == nil {
				t.Errorf("%s: kept %s has no logs entry: its authors' log, or absent saying they published none", name, label)
				continue
			}
			for _, e := range l.Evals {
				if e.Round%m.Train.EvalEvery != 0 {
					t.Errorf("%s: %s logged at round %d, which the manifest does not evaluate (every %d)", name, label, e.Round, m.Train.EvalEvery)
				}
			}
		}
	}
	if n < 28 {
		t.Errorf("%d kept FedOBP Table 6 and 8 FMNIST/MNIST cells found, want at least the 28 kept when this test was written", n)
	}
}

// TestAbsentLog: a log entry may say the authors published none (absent, no rounds); one
// that says so and lists rounds, or lists neither, fails at its field.
func TestAbsentLog(t *testing.T) {
	absent := validManifest + `logs:
  - method: fedavg
    source: "some/repo@abc"
    absent: "the repository holds logs of local only"
`
	m, err := ParseManifest("m.yaml", []byte(absent))
	if err != nil {
		t.Fatal(err)
	}
	if l := m.LogOf("fedavg"); l == nil || l.Absent == "" || len(l.Evals) != 0 {
		t.Fatalf("LogOf(fedavg) = %+v", l)
	}
	both := strings.Replace(logsManifest, "    evals:", "    absent: \"none\"\n    evals:", 1)
	var ie *InputError
	if _, err := ParseManifest("m.yaml", []byte(both)); !errors.As(err, &ie) || ie.Field != "logs[0].absent" || !strings.Contains(ie.Msg, "either absent or evals") {
		t.Errorf("absent with rounds: err = %v", err)
	}
	neither := strings.Replace(absent, "    absent: \"the repository holds logs of local only\"\n", "", 1)
	if _, err := ParseManifest("m.yaml", []byte(neither)); !errors.As(err, &ie) || ie.Field != "logs[0].evals" || !strings.Contains(ie.Msg, "absent") {
		t.Errorf("neither absent nor rounds: err = %v", err)
	}
}
