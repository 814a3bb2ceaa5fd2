package data

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // decoders for image folders
	_ "image/png"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/fedpipe/fedpipe/manifest"
)

// Default image sides. OfficeHome is used with an ImageNet-pretrained ResNet-18
// (FedSelect), whose input is 224×224; Mini-ImageNet images are 84×84 as released.
const (
	OfficeHomeImageSize   = 224
	MiniImageNetImageSize = 84
)

// imageFile is one image of an image-folder dataset.
type imageFile struct {
	path, rel     string
	label, domain int32
}

// isImageName reports whether a file name has a .jpg, .jpeg or .png extension.
func isImageName(name string) bool {
	switch lower(filepath.Ext(name)) {
	case ".jpg", ".jpeg", ".png":
		return true
	}
	return false
}

// subdirs lists the directories in dir, sorted by name, leaving out hidden ones and
// archive debris such as __MACOSX.
func subdirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "__") { // .git, __MACOSX
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// classFolders lists the images under root/<class>/, classes sorted by name, files
// sorted by name within a class, labelled by the class's index in classes.
func classFolders(root, relPrefix string, classes map[string]int32, domain int32) ([]imageFile, error) {
	names, err := subdirs(root)
	if err != nil {
		return nil, err
	}
	var out []imageFile
	for _, c := range names {
		ents, err := os.ReadDir(filepath.Join(root, c))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.Type().IsRegular() && isImageName(e.Name()) {
				out = append(out, imageFile{path: filepath.Join(root, c, e.Name()), rel: relPrefix + c + "/" + e.Name(),
					label: classes[c], domain: domain})
			}
		}
	}
	return out, nil
}

// classIndex numbers the union of the class folder names under the roots, sorted.
func classIndex(roots []string) (map[string]int32, []string, error) {
	set := map[string]bool{}
	for _, r := range roots {
		names, err := subdirs(r)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range names {
			set[n] = true
		}
	}
	var names []string
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	idx := map[string]int32{}
	for i, n := range names {
		idx[n] = int32(i)
	}
	return idx, names, nil
}

// decodeImages reads, decodes and resizes every file to size×size RGB in [0, 1] (NHWC),
// in parallel, each file into its own slot, so the result does not depend on scheduling.
// The digest covers each file's relative path, length and SHA-256, in list order.
func decodeImages(files []imageFile, size int, g *digester) ([]float32, error) {
	per := size * size * 3
	unit := make([]float32, len(files)*per)
	sums := make([][32]byte, len(files))
	lens := make([]int, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				raw, err := os.ReadFile(files[i].path)
				if err != nil {
					errs[i] = err
					continue
				}
				sums[i], lens[i] = sha256.Sum256(raw), len(raw)
				img, _, err := image.Decode(bytes.NewReader(raw))
				if err != nil {
					errs[i] = &FormatError{files[i].path, "JPEG or PNG image", err.Error()}
					continue
				}
				b := img.Bounds()
				if b.Dx() == 0 || b.Dy() == 0 {
					errs[i] = &FormatError{files[i].path, "JPEG or PNG image", "empty image"}
					continue
				}
				rgba := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
				draw.Draw(rgba, rgba.Bounds(), img, b.Min, draw.Src)
				ResizeArea(rgba, size, unit[i*per:(i+1)*per])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(g.h, "%s\x00%d\x00%x", files[i].rel, lens[i], sums[i])
	}
	return unit, nil
}

// ResizeArea resizes src to size×size RGB by area averaging (each output pixel is the
// mean of the source area it covers, partial pixels weighted by their overlap; a plain
// box interpolation when enlarging) and writes the result, in [0, 1], HWC, to out.
// Non-square images are stretched, as torchvision's Resize((size, size)) does.
func ResizeArea(src *image.RGBA, size int, out []float32) {
	w, h := src.Rect.Dx(), src.Rect.Dy()
	wx, wy := areaWeights(w, size), areaWeights(h, size)
	// Horizontal pass: h rows × size columns × 3 channels.
	tmp := make([]float64, h*size*3)
	for y := 0; y < h; y++ {
		row := src.Pix[y*src.Stride:]
		for ox, ws := range wx {
			var r, g, b float64
			for _, t := range ws {
				p := row[4*t.i:]
				r += t.w * float64(p[0])
				g += t.w * float64(p[1])
				b += t.w * float64(p[2])
			}
			o := (y*size + ox) * 3
			tmp[o], tmp[o+1], tmp[o+2] = r, g, b
		}
	}
	for oy, ws := range wy {
		for ox := 0; ox < size; ox++ {
			var r, g, b float64
			for _, t := range ws {
				p := tmp[(t.i*size+ox)*3:]
				r += t.w * p[0]
				g += t.w * p[1]
				b += t.w * p[2]
			}
			o := (oy*size + ox) * 3
			out[o], out[o+1], out[o+2] = float32(r/255), float32(g/255), float32(b/255)
		}
	}
}

type tap struct {
	i int
	w float64
}

// areaWeights gives, for each of n output cells over a source of length src, the source
// pixels it overlaps and their normalized overlap weights.
func areaWeights(src, n int) [][]tap {
	out := make([][]tap, n)
	scale := float64(src) / float64(n)
	for o := range out {
		lo, hi := float64(o)*scale, float64(o+1)*scale
		for i := int(lo); i < src && float64(i) < hi; i++ {
			ov := min(hi, float64(i+1)) - max(lo, float64(i))
			if ov > 1e-12 {
				out[o] = append(out[o], tap{i, ov / scale})
			}
		}
	}
	return out
}

// imageSize is the spec's image side or the default.
func imageSize(spec manifest.DatasetSpec, def int) int {
	if spec.ImageSize > 0 {
		return spec.ImageSize
	}
	return def
}

// LoadOfficeHome reads OfficeHome from root/<Domain>/<Class>/*.jpg: domains sorted by
// folder name (Art, Clipart, Product, Real World), classes numbered by the sorted union
// of class folder names (65), images resized to size×size. Each sample's domain is in
// Domains. Statistics are computed over all images unless mode says otherwise.
func LoadOfficeHome(root string, size int, mode string) (*Dataset, error) {
	domains, err := subdirs(root)
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, d := range domains {
		roots = append(roots, filepath.Join(root, d))
	}
	classes, names, err := classIndex(roots)
	if err != nil {
		return nil, err
	}
	var files []imageFile
	for k, d := range domains {
		f, err := classFolders(roots[k], d+"/", classes, int32(k))
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	if len(files) == 0 {
		return nil, &FormatError{root, "OfficeHome folder", "no .jpg or .png images under <Domain>/<Class>/"}
	}
	g := newDigester()
	unit, err := decodeImages(files, size, g)
	if err != nil {
		return nil, err
	}
	y := make([]int32, len(files))
	dom := make([]int32, len(files))
	for i, f := range files {
		y[i], dom[i] = f.label, f.domain
	}
	d := imageDataset("officehome", []int{size, size, 3}, len(names), unit, y, len(files), mode, nil)
	d.Domains, d.DomainNames = dom, domains
	d.Digest, d.Source = g.sum(), root
	return d, nil
}

func loadOfficeHome(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadOfficeHome(dir, imageSize(spec, OfficeHomeImageSize), spec.Normalize)
}

// miniImageNetSplits are the split folders pooled, in this order, when present.
var miniImageNetSplits = []string{"train", "val", "test"}

// LoadMiniImageNet reads Mini-ImageNet as image folders: root/{train,val,test}/<class>/
// when any split folder exists (pooled in that order), else root/<class>/. Classes are the
// sorted union of class folder names (100 for the Ravi & Larochelle split, whose splits
// hold disjoint classes). Images are resized to size×size; statistics come from the
// train folder (all images without split folders) unless mode says otherwise.
func LoadMiniImageNet(root string, size int, mode string) (*Dataset, error) {
	var roots, prefixes []string
	for _, s := range miniImageNetSplits {
		if isDir(filepath.Join(root, s)) {
			roots, prefixes = append(roots, filepath.Join(root, s)), append(prefixes, s+"/")
		}
	}
	if roots == nil {
		roots, prefixes = []string{root}, []string{""}
	}
	classes, names, err := classIndex(roots)
	if err != nil {
		return nil, err
	}
	var files []imageFile
	trainN := 0
	for k, r := range roots {
		f, err := classFolders(r, prefixes[k], classes, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
		if k == 0 {
			trainN = len(f)
		}
	}
	if trainN == 0 {
		return nil, &FormatError{roots[0], "Mini-ImageNet folder", "no .jpg or .png images under <class>/"}
	}
	g := newDigester()
	unit, err := decodeImages(files, size, g)
	if err != nil {
		return nil, err
	}
	y := make([]int32, len(files))
	for i, f := range files {
		y[i] = f.label
	}
	d := imageDataset("miniimagenet", []int{size, size, 3}, len(names), unit, y, trainN, mode, nil)
	d.Digest, d.Source = g.sum(), root
	return d, nil
}

func loadMiniImageNet(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadMiniImageNet(dir, imageSize(spec, MiniImageNetImageSize), spec.Normalize)
}
