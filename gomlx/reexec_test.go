package gomlx

import "testing"

// backendArg finds the first --backend value of a command line, in either form, before
// any "--".
func TestBackendArg(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "m.yaml", "--backend", "xla:cuda"}, "xla:cuda"},
		{[]string{"bench", "--backend=xla:cpu", "--round"}, "xla:cpu"},
		{[]string{"run", "m.yaml", "--", "--backend", "x"}, ""},
		{[]string{"run", "m.yaml", "--backend"}, ""},
		{[]string{"status", "m.yaml"}, ""},
	} {
		if got := backendArg(tc.args); got != tc.want {
			t.Errorf("backendArg(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
