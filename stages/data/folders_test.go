package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

func solidPNG(t *testing.T, w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func grayJPEG(t *testing.T, w, h int, v uint8) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = v
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestResizeAreaAverages(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for x := 0; x < 4; x++ {
		for y := 0; y < 2; y++ {
			src.Set(x, y, color.RGBA{uint8(10 * x), uint8(100 * y), 0, 255})
		}
	}
	out := make([]float32, 2*2*3)
	ResizeArea(src, 2, out)
	// Output (0,0) covers x 0–1 of row 0: R mean 5, G 0. Output (1,1) covers x 2–3 of row 1.
	want := []float64{5, 0, 0, 25, 0, 0, 5, 100, 0, 25, 100, 0}
	for i, w := range want {
		if !near(float64(out[i]), w/255) {
			t.Fatalf("resized %v, want %v/255", out, want)
		}
	}
	// 3 → 2 splits the middle pixel between both outputs.
	src3 := image.NewRGBA(image.Rect(0, 0, 3, 3))
	for x := 0; x < 3; x++ {
		for y := 0; y < 3; y++ {
			src3.Set(x, y, color.RGBA{uint8(30 * x), 0, 0, 255})
		}
	}
	ResizeArea(src3, 2, out)
	if !near(float64(out[0]), 10.0/255) || !near(float64(out[3]), 50.0/255) {
		t.Errorf("3→2: R %v %v, want 10/255 and 50/255", out[0]*255, out[3]*255)
	}
}

func TestOfficeHomeDomainsAndClasses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "OfficeHome")
	write(t, filepath.Join(root, "Art", "Bike", "00001.jpg"), grayJPEG(t, 10, 6, 200))
	write(t, filepath.Join(root, "Art", "Alarm_Clock", "00002.png"), solidPNG(t, 8, 8, color.RGBA{255, 0, 0, 255}))
	write(t, filepath.Join(root, "Real World", "Bike", "a.PNG"), solidPNG(t, 3, 5, color.RGBA{0, 0, 255, 255}))
	write(t, filepath.Join(root, "Real World", "Bike", "notes.txt"), []byte("not an image"))
	write(t, filepath.Join(root, "__MACOSX", "Art", "._x.jpg"), []byte("resource fork"))
	l := &Loader{DataDir: filepath.Dir(root)}
	d, err := l.Load(manifest.DatasetSpec{Name: "officehome", ImageSize: 4, Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 3 || d.Classes != 2 || fmt.Sprint(d.Shape) != "[4 4 3]" {
		t.Fatalf("%d samples, %d classes, shape %v", d.Len(), d.Classes, d.Shape)
	}
	// Art/Alarm_Clock, Art/Bike, Real World/Bike.
	if fmt.Sprint(d.Y) != "[0 1 1]" || fmt.Sprint(d.Domains) != "[0 0 1]" || fmt.Sprint(d.DomainNames) != "[Art Real World]" {
		t.Errorf("labels %v domains %v %v", d.Y, d.Domains, d.DomainNames)
	}
	if s := d.Sample(0); s[0] != 1 || s[1] != 0 || s[47] != 0 {
		t.Errorf("red image decoded as %v", s[:3])
	}
	if s := d.Sample(1); !near(float64(s[0]), 200.0/255) || s[0] != s[2] {
		t.Errorf("gray JPEG decoded as %v", s[:3])
	}
	if s := d.Sample(2); s[2] != 1 || s[0] != 0 {
		t.Errorf("blue image decoded as %v", s[:3])
	}
	again, _ := LoadOfficeHome(root, 4, "none")
	if again.Digest != d.Digest {
		t.Error("same files gave a different digest")
	}
	write(t, filepath.Join(root, "Art", "Bike", "00003.jpg"), []byte("\xff\xd8 truncated"))
	_, err = LoadOfficeHome(root, 4, "")
	wantFormatError(t, err, filepath.Join(root, "Art", "Bike", "00003.jpg"), "not a valid JPEG or PNG image")
}

func TestMiniImageNetSplitsPooled(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "train", "n01532829", "a.jpg"), grayJPEG(t, 84, 84, 10))
	write(t, filepath.Join(root, "train", "n01558993", "b.jpg"), grayJPEG(t, 84, 84, 20))
	write(t, filepath.Join(root, "test", "n01930112", "c.jpg"), grayJPEG(t, 84, 84, 30))
	d, err := (&Loader{}).Load(manifest.DatasetSpec{Name: "miniimagenet", Path: root, ImageSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if d.Classes != 3 || fmt.Sprint(d.Y) != "[0 1 2]" || d.Shape[0] != 8 {
		t.Errorf("classes %d labels %v shape %v", d.Classes, d.Y, d.Shape)
	}
	// Statistics come from the train folder: mean of 10 and 20.
	if m := d.PixelMean[0] * 255; m < 14.5 || m > 15.5 {
		t.Errorf("mean %v×255, want ≈ 15 (train images)", d.PixelMean[0]*255)
	}
	bad := filepath.Join(root, "test", "n01930112", "d.png")
	write(t, bad, solidPNG(t, 4, 4, color.RGBA{1, 2, 3, 255})[:30])
	_, err = LoadMiniImageNet(root, 8, "")
	wantFormatError(t, err, bad, "not a valid JPEG or PNG image")
	_, err = (&Loader{}).Load(manifest.DatasetSpec{Name: "miniimagenet", Path: t.TempDir()})
	var miss *MissingDataError
	if !errors.As(err, &miss) || !strings.Contains(err.Error(), "n01532829") {
		t.Errorf("empty folder: %v", err)
	}
}

func writeHAR(t *testing.T, dir string, rows map[string][][3]int) {
	for split, rs := range rows {
		var x, y, s strings.Builder
		for i, r := range rs {
			for f := 0; f < HARFeatures; f++ {
				fmt.Fprintf(&x, " %.7e", float64(i+f)/1000)
			}
			x.WriteString("\n")
			fmt.Fprintf(&y, "%d\n", r[0])
			fmt.Fprintf(&s, "%d\n", r[1])
		}
		write(t, filepath.Join(dir, split, "X_"+split+".txt"), []byte(x.String()))
		write(t, filepath.Join(dir, split, "y_"+split+".txt"), []byte(y.String()))
		write(t, filepath.Join(dir, split, "subject_"+split+".txt"), []byte(s.String()))
	}
}

func TestUCIHAR(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "UCI HAR Dataset")
	writeHAR(t, dir, map[string][][3]int{"train": {{1, 7}, {6, 3}}, "test": {{3, 30}}})
	l := &Loader{DataDir: filepath.Dir(dir)}
	d, err := l.Load(manifest.DatasetSpec{Name: "har"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 3 || fmt.Sprint(d.Y) != "[0 5 2]" || fmt.Sprint(d.Groups) != "[1 0 2]" || d.Classes != 6 {
		t.Fatalf("labels %v groups %v", d.Y, d.Groups)
	}
	if d.Sample(1)[560] != float32(561.0/1000) || d.IsImage() {
		t.Errorf("feature %v", d.Sample(1)[560])
	}
	writeHAR(t, dir, map[string][][3]int{"test": {{7, 30}}})
	_, err = LoadHAR(dir)
	wantFormatError(t, err, filepath.Join(dir, "test", "y_test.txt"), "activity 7, want 1..6")
	os.WriteFile(filepath.Join(dir, "train", "X_train.txt"), []byte("1 2 3\n"), 0o644)
	_, err = LoadHAR(dir)
	wantFormatError(t, err, filepath.Join(dir, "train", "X_train.txt"), "line 1 has 3 values, want 561")
}

func leafJSON(t *testing.T, users map[string][]int) []byte {
	type ud struct {
		X [][]float32 `json:"x"`
		Y []int       `json:"y"`
	}
	f := struct {
		Users      []string      `json:"users"`
		NumSamples []int         `json:"num_samples"`
		UserData   map[string]ud `json:"user_data"`
	}{UserData: map[string]ud{}}
	for _, u := range []string{"f0001_41", "f0002_12", "f0003_07"} {
		ys, ok := users[u]
		if !ok {
			continue
		}
		var x [][]float32
		for _, y := range ys {
			img := make([]float32, 784)
			img[0] = float32(y) / 100
			x = append(x, img)
		}
		f.Users, f.NumSamples = append(f.Users, u), append(f.NumSamples, len(ys))
		f.UserData[u] = ud{x, ys}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFEMNISTWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "femnist")
	write(t, filepath.Join(dir, "train", "a.json"), leafJSON(t, map[string][]int{"f0001_41": {3, 61}, "f0002_12": {0}}))
	write(t, filepath.Join(dir, "test", "a.json"), leafJSON(t, map[string][]int{"f0001_41": {9}, "f0003_07": {5}}))
	l := &Loader{DataDir: filepath.Dir(dir)}
	d, err := l.Load(manifest.DatasetSpec{Name: "femnist", Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Y) != "[3 61 0 9 5]" || fmt.Sprint(d.Groups) != "[0 0 1 0 2]" || d.Classes != 62 {
		t.Fatalf("labels %v groups %v", d.Y, d.Groups)
	}
	if d.Sample(1)[0] != 0.61 || fmt.Sprint(d.Shape) != "[28 28 1]" {
		t.Errorf("pixel %v shape %v", d.Sample(1)[0], d.Shape)
	}
	write(t, filepath.Join(dir, "test", "a.json"), leafJSON(t, map[string][]int{"f0003_07": {62}}))
	_, err = LoadFEMNIST(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "test", "a.json"), "label 62, want 0..61")
	write(t, filepath.Join(dir, "test", "a.json"), []byte(`{"users": ["x"], "user_data": {`))
	_, err = LoadFEMNIST(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "test", "a.json"), "not a valid LEAF JSON file")
}

// Every dataset read from disk names the paths searched, the file expected and where to
// get it when it is missing.
func TestMissingDataNamesEverything(t *testing.T) {
	root := t.TempDir()
	for name, e := range byName {
		src := e.src
		if src.generate != nil {
			continue // generated: no files to miss
		}
		spec := manifest.DatasetSpec{Name: name, Variant: map[string]string{"cifar10c": "fog", "medmnist": "organamnist"}[name]}
		_, err := (&Loader{DataDir: root}).Load(spec)
		var miss *MissingDataError
		if !errors.As(err, &miss) || !errors.Is(err, manifest.ErrInvalid) {
			t.Errorf("%s: %v is not a MissingDataError", name, err)
			continue
		}
		for _, want := range append([]string{root, src.missing(spec), installHelp(name)}, filepath.Join(root, src.subdirs[0])) {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q:\n%v", name, want, err)
			}
		}
	}
	t.Setenv("FEDPIPE_DATA", "")
	// Without --data or $FEDPIPE_DATA: the per-user data directory and its sub-folders.
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	_, err := (&Loader{}).Load(manifest.DatasetSpec{Name: "cifar10"})
	if want := filepath.Join(home, "fedpipe", "datasets", "cifar-10-batches-bin"); !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("per-user data directory not searched (want %s): %v", want, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "")
	_, err = (&Loader{}).Load(manifest.DatasetSpec{Name: "cifar10"})
	if !strings.Contains(fmt.Sprint(err), "no dataset.path, --data or $FEDPIPE_DATA given") {
		t.Errorf("nothing to search: %v", err)
	}
	t.Setenv("FEDPIPE_DATA", root)
	_, err = (&Loader{}).Load(manifest.DatasetSpec{Name: "svhn"})
	if !strings.Contains(fmt.Sprint(err), filepath.Join(root, "svhn")) {
		t.Errorf("$FEDPIPE_DATA not searched: %v", err)
	}
}
