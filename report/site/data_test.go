package site

import (
	"fmt"
	"testing"
)

// The data tables keep the columns (names, kinds, order) that readers of tables/ use.
func TestDataTableColumns(t *testing.T) {
	for _, tc := range []struct {
		cols func() string
		want string
	}{
		{cols(resultCell{}), "method:string cell:string seeds:int64 mean:float64 std:float64 published:float64 verdict:string"},
		{cols(roundAccuracy{}), "cell:string method:string round:int64 accuracy:float64"},
		{cols(layerFraction{}), "tensor:string round:int64 personalized_percent:float64"},
		{cols(scoreAccuracy{}), "score:string q:float64 accuracy:float64"},
		{cols(shiftAccuracy{}), "method:string level:float64 accuracy_client_mean:float64 accuracy_client_std:float64"},
	} {
		if got := tc.cols(); got != tc.want {
			t.Errorf("columns %q, want %q", got, tc.want)
		}
	}
}

// cols returns a function naming the columns of r's type as "name:kind ...".
func cols[T any](r T) func() string {
	return func() string {
		tb := dataTable([]T{r})
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
