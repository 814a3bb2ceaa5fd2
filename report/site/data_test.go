package site

import (
	"fmt"
	"testing"

	"github.com/fedpipe/fedpipe/results/summary"
)

// The data tables keep the columns (names, kinds, order) that readers of tables/ use; their
// percentages are *_pct columns (issue 18: one unit per column name).
func TestDataTableColumns(t *testing.T) {
	for _, tc := range []struct {
		cols func() string
		want string
	}{
		{cols(resultCell{}), "method:string display:string cell:string seeds:int64 mean_pct:float64 std_pct:float64 published_pct:float64 verdict:string std_sample_pct:float64 ci95_lo_pct:float64 ci95_hi_pct:float64 ci95_over:string vs_best:string p_vs_best_holm:float64 compare_over:string"},
		{cols(pairwiseRow{}), "cell:string method_a:string method_b:string paired_over:string n:int64 mean_diff_pct:float64 ci95_lo_pct:float64 ci95_hi_pct:float64 p:float64 p_holm:float64 test:string"},
		{cols(roundAccuracy{}), "cell:string method:string display:string round:int64 accuracy_pct:float64 accuracy_std_pct:float64"},
		{cols(layerFraction{}), "tensor:string round:int64 personalized_pct:float64"},
		{cols(scoreAccuracy{}), "score:string q:float64 accuracy_pct:float64"},
		{cols(shiftAccuracy{}), "method:string display:string level:float64 accuracy_client_mean_pct:float64 accuracy_client_std_pct:float64"},
	} {
		if got := tc.cols(); got != tc.want {
			t.Errorf("columns %q, want %q", got, tc.want)
		}
	}
}

// cols returns a function naming the columns of r's type as "name:kind ...".
func cols[T any](r T) func() string {
	return func() string {
		tb := summary.DataTable([]T{r}, nil)
		s := ""
		for i, c := range tb.Columns {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprintf("%s:%v", c.Name, c.Kind)
		}
		return s
	}
}
