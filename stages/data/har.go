package data

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
)

// HARFeatures is the number of features per UCI HAR window.
const HARFeatures = 561

// textRows parses a whitespace-separated numeric text file into rows of want values each
// (want 0: any count, but the same on every row).
func textRows(path string, raw []byte, want int) ([][]float64, error) {
	var rows [][]float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if want > 0 && len(fields) != want {
			return nil, &FormatError{path, "UCI HAR text file", fmt.Sprintf("line %d has %d values, want %d", line, len(fields), want)}
		}
		row := make([]float64, len(fields))
		for i, f := range fields {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &FormatError{path, "UCI HAR text file", fmt.Sprintf("line %d, value %d: %q is not a number", line, i+1, f)}
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, &FormatError{path, "UCI HAR text file", err.Error()}
	}
	return rows, nil
}

// LoadHAR reads the UCI HAR Dataset folder: {train,test}/X_*.txt (561 features per
// window, already scaled to [−1, 1] by the authors and used as is), y_*.txt (activities
// 1–6, mapped to 0–5) and subject_*.txt (the volunteer, each a natural client: Groups
// numbers the subjects in increasing order of their id). Train then test.
func LoadHAR(dir string) (*Dataset, error) {
	g := newDigester()
	d := &Dataset{Name: "har", Shape: []int{HARFeatures}, Classes: 6, Source: dir}
	var subjects []int
	for _, split := range []string{"train", "test"} {
		var parts [3][][]float64
		for k, f := range []struct {
			name string
			cols int
		}{{"X_" + split + ".txt", HARFeatures}, {"y_" + split + ".txt", 1}, {"subject_" + split + ".txt", 1}} {
			rel := split + "/" + f.name
			p := filepath.Join(dir, split, f.name)
			if !isFile(p) {
				return nil, &MissingDataError{Dataset: "har", Searched: []string{dir}, Missing: rel, Install: installHelp("har")}
			}
			raw, err := g.read(p, rel)
			if err != nil {
				return nil, err
			}
			if parts[k], err = textRows(p, raw, f.cols); err != nil {
				return nil, err
			}
		}
		x, y, s := parts[0], parts[1], parts[2]
		if len(y) != len(x) || len(s) != len(x) {
			return nil, &FormatError{filepath.Join(dir, split), "UCI HAR split", fmt.Sprintf("%d feature rows, %d labels, %d subjects; want equal counts", len(x), len(y), len(s))}
		}
		for i := range x {
			l := y[i][0]
			if l != math.Trunc(l) || l < 1 || l > 6 {
				return nil, &FormatError{filepath.Join(dir, split, "y_"+split+".txt"), "UCI HAR text file", fmt.Sprintf("line %d: activity %v, want 1..6", i+1, l)}
			}
			if sv := s[i][0]; sv != math.Trunc(sv) || sv < 1 || sv > 1e6 {
				return nil, &FormatError{filepath.Join(dir, split, "subject_"+split+".txt"), "UCI HAR text file", fmt.Sprintf("line %d: subject %v, want a positive integer", i+1, sv)}
			}
			for _, v := range x[i] {
				d.X = append(d.X, float32(v))
			}
			d.Y = append(d.Y, int32(l)-1)
			subjects = append(subjects, int(s[i][0]))
		}
	}
	d.Groups = denseGroups(subjects)
	d.Digest = g.sum()
	return d, nil
}

// denseGroups numbers distinct ids 0, 1, … in increasing order of id.
func denseGroups(ids []int) []int32 {
	uniq := map[int]int32{}
	for _, id := range ids {
		uniq[id] = 0
	}
	sorted := make([]int, 0, len(uniq))
	for id := range uniq {
		sorted = append(sorted, id)
	}
	sort.Ints(sorted)
	for i, id := range sorted {
		uniq[id] = int32(i)
	}
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = uniq[id]
	}
	return out
}

func loadHAR(dir string, _ manifest.DatasetSpec) (*Dataset, error) { return LoadHAR(dir) }

// FEMNISTClasses is the number of FEMNIST labels (10 digits, 26 + 26 letters).
const FEMNISTClasses = 62

// leafFile is a LEAF JSON file.
type leafFile struct {
	Users      []string `json:"users"`
	NumSamples []int    `json:"num_samples"`
	UserData   map[string]struct {
		X [][]float32 `json:"x"`
		Y []int       `json:"y"`
	} `json:"user_data"`
}

// LoadFEMNIST reads LEAF's FEMNIST JSON: dir/all_data/*.json, or dir/train/*.json then
// dir/test/*.json, files in name order, users in each file's "users" order. Each writer is
// a natural client (Groups numbers writers in order of first appearance); x holds 784
// values in [0, 1] (28×28, row-major), y the class 0–61. Statistics are computed over all
// samples unless mode says otherwise.
func LoadFEMNIST(dir, mode string) (*Dataset, error) {
	// filepath.Glob returns names in lexical order.
	files, _ := filepath.Glob(filepath.Join(dir, "all_data", "*.json"))
	if len(files) == 0 {
		for _, sub := range []string{"train", "test"} {
			m, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
			files = append(files, m...)
		}
	}
	if len(files) == 0 {
		return nil, &MissingDataError{Dataset: "femnist", Searched: []string{dir}, Missing: "all_data/*.json, or train/*.json and test/*.json (LEAF format)",
			Install: installHelp("femnist")}
	}
	g := newDigester()
	writers := map[string]int32{}
	var unit []float32
	var y, groups []int32
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		raw, err := g.read(p, filepath.ToSlash(rel))
		if err != nil {
			return nil, err
		}
		var f leafFile
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, &FormatError{p, "LEAF JSON file", err.Error()}
		}
		if f.UserData == nil {
			return nil, &FormatError{p, "LEAF JSON file", `no "user_data" object`}
		}
		for k, u := range f.Users {
			ud, ok := f.UserData[u]
			if !ok {
				return nil, &FormatError{p, "LEAF JSON file", fmt.Sprintf("user %q listed in users has no user_data", u)}
			}
			if len(ud.X) != len(ud.Y) {
				return nil, &FormatError{p, "LEAF JSON file", fmt.Sprintf("user %q has %d images but %d labels", u, len(ud.X), len(ud.Y))}
			}
			if k < len(f.NumSamples) && f.NumSamples[k] != len(ud.Y) {
				return nil, &FormatError{p, "LEAF JSON file", fmt.Sprintf("user %q has %d samples, num_samples[%d] says %d", u, len(ud.Y), k, f.NumSamples[k])}
			}
			id, seen := writers[u]
			if !seen {
				id = int32(len(writers))
				writers[u] = id
			}
			for i, x := range ud.X {
				if len(x) != 784 {
					return nil, &FormatError{p, "LEAF JSON file", fmt.Sprintf("user %q sample %d has %d values, want 784 (28×28)", u, i, len(x))}
				}
				if ud.Y[i] < 0 || ud.Y[i] >= FEMNISTClasses {
					return nil, &FormatError{p, "LEAF JSON file", fmt.Sprintf("user %q sample %d has label %d, want 0..61", u, i, ud.Y[i])}
				}
				for _, v := range x {
					if !(v >= 0 && v <= 1) {
						return nil, &FormatError{p, "LEAF JSON file", fmt.Sprintf("user %q sample %d has pixel %v outside [0, 1]", u, i, v)}
					}
				}
				unit = append(unit, x...)
				y = append(y, int32(ud.Y[i]))
				groups = append(groups, id)
			}
		}
	}
	if len(y) == 0 {
		return nil, &FormatError{dir, "LEAF FEMNIST folder", "the JSON files hold no samples"}
	}
	d := imageDataset("femnist", []int{28, 28, 1}, FEMNISTClasses, unit, y, len(y), mode, nil)
	d.Groups = groups
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}

func loadFEMNIST(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadFEMNIST(dir, spec.Normalize)
}
