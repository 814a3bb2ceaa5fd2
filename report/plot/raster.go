package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// DefaultScale is the PNG's size relative to the SVG's when PNG is given a scale of 0:
// twice the pixels, crisp when pasted into a slide.
const DefaultScale = 2

// PNG renders the chart as a PNG image, scale times the SVG's size in pixels (0 means
// DefaultScale). It rasterizes the chart's SVG, so the two never disagree.
func (c LineChart) PNG(scale float64) ([]byte, error) { return PNG(c.SVG(), scale) }

// PNG renders the heatmap as a PNG image, scale times the SVG's size in pixels (0 means
// DefaultScale). It rasterizes the heatmap's SVG, so the two never disagree.
func (h Heatmap) PNG(scale float64) ([]byte, error) { return PNG(h.SVG(), scale) }

// PNG rasterizes an SVG document drawn by this package into a PNG image scale times its
// size in pixels (0 means DefaultScale), on a white background, with the Go fonts
// standing in for Helvetica. It understands only the SVG this package writes (rect, line,
// path with M/L/Z, polygon, circle, text and g, with their presentation attributes) and
// returns an error on anything else, so that a new kind of mark in a chart is noticed
// rather than silently left out of the PNG. Equal input gives equal bytes: the image is
// drawn in document order and the PNG holds no time or other metadata.
func PNG(svg string, scale float64) ([]byte, error) {
	img, err := Rasterize(svg, scale)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// style is the resolved presentation of an element: its own attributes over its
// ancestors', over SVG's defaults.
type style struct {
	fill, stroke string // "none" or "#rrggbb"
	strokeWidth  float64
	fillOpacity  float64
	fontSize     float64
	bold         bool
	anchor       string
}

var defaultStyle = style{fill: "#000000", stroke: "none", strokeWidth: 1, fillOpacity: 1, fontSize: 16, anchor: "start"}

// geometry attributes, read by the element that uses them; any other attribute is an error.
var geometry = map[string]bool{"x": true, "y": true, "width": true, "height": true, "x1": true, "y1": true,
	"x2": true, "y2": true, "cx": true, "cy": true, "r": true, "d": true, "points": true, "transform": true,
	"viewBox": true, "xmlns": true, "class": true, "data-name": true, "font-family": true}

// inherit applies an element's presentation attributes to its parent's style.
func (s style) inherit(attrs []xml.Attr) (style, error) {
	var err error
	num := func(v string) float64 {
		f, e := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
		if e != nil && err == nil {
			err = fmt.Errorf("bad number %q", v)
		}
		return f
	}
	for _, a := range attrs {
		v := a.Value
		switch a.Name.Local {
		case "fill":
			s.fill = v
		case "stroke":
			s.stroke = v
		case "stroke-width":
			s.strokeWidth = num(v)
		case "fill-opacity":
			s.fillOpacity = num(v)
		case "font-size":
			s.fontSize = num(v)
		case "font-weight":
			switch v {
			case "bold", "bolder":
				s.bold = true
			case "normal", "lighter":
				s.bold = false
			default:
				s.bold = num(v) >= 600
			}
		case "text-anchor":
			if v != "start" && v != "middle" && v != "end" {
				return s, fmt.Errorf("text-anchor %q", v)
			}
			s.anchor = v
		default:
			if !geometry[a.Name.Local] || a.Name.Space != "" && a.Name.Space != "xmlns" {
				return s, fmt.Errorf("unsupported attribute %q", a.Name.Local)
			}
		}
	}
	return s, err
}

// paint parses a colour ("none", "#rrggbb" or "#rgb") with an opacity; ok is false for none.
func paint(c string, opacity float64) (col color.NRGBA, ok bool, err error) {
	if c == "none" {
		return col, false, nil
	}
	h := strings.TrimPrefix(c, "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	v, e := strconv.ParseUint(h, 16, 32)
	if !strings.HasPrefix(c, "#") || len(h) != 6 || e != nil {
		return col, false, fmt.Errorf("unsupported colour %q", c)
	}
	a := math.Round(255 * math.Max(0, math.Min(1, opacity)))
	return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), uint8(a)}, a > 0, nil
}

// pt is a point in the image's pixels.
type pt struct{ x, y float64 }

// raster draws the elements of one SVG document onto an image.
type raster struct {
	img   *image.RGBA
	scale float64
	z     vector.Rasterizer
	faces map[faceKey]xfont.Face
}

type faceKey struct {
	size float64
	bold bool
}

// Rasterize draws an SVG document written by this package onto an image scale times its
// size (0 means DefaultScale); see PNG.
func Rasterize(svg string, scale float64) (*image.RGBA, error) {
	if scale == 0 {
		scale = DefaultScale
	}
	if !(scale > 0) || scale > 64 {
		return nil, fmt.Errorf("plot: scale %v out of range", scale)
	}
	r := &raster{scale: scale, faces: map[faceKey]xfont.Face{}}
	if err := r.run(svg); err != nil {
		return nil, fmt.Errorf("plot: rasterizing SVG: %w", err)
	}
	return r.img, nil
}

func (r *raster) run(svg string) error {
	d := xml.NewDecoder(strings.NewReader(svg))
	d.Strict = true
	var stack []style
	var text *textRun // the <text> being read
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			name := tok.Name.Local
			if r.img == nil && name != "svg" {
				return fmt.Errorf("root element is <%s>, want <svg>", name)
			}
			parent := defaultStyle
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			if text != nil {
				return fmt.Errorf("<%s> inside <text>", name)
			}
			st, err := parent.inherit(tok.Attr)
			if err != nil {
				return fmt.Errorf("<%s>: %w", name, err)
			}
			stack = append(stack, st)
			switch name {
			case "svg":
				if r.img != nil {
					return errors.New("nested <svg>")
				}
				if err := r.canvas(tok.Attr); err != nil {
					return err
				}
			case "g":
			case "title": // a hover tooltip: nothing to draw
			case "text":
				text = &textRun{st: st, attrs: tok.Attr}
			case "rect", "line", "path", "polygon", "circle":
				if err := r.shape(name, tok.Attr, st); err != nil {
					return fmt.Errorf("<%s>: %w", name, err)
				}
			default:
				return fmt.Errorf("unsupported element <%s>", name)
			}
		case xml.CharData:
			if text != nil {
				text.s.Write(tok)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			switch tok.Name.Local {
			case "text":
				if err := r.text(text); err != nil {
					return fmt.Errorf("<text>: %w", err)
				}
				text = nil
			}
		}
	}
	if r.img == nil {
		return errors.New("no <svg> element")
	}
	return nil
}

// attrNums reads the named numeric attributes of an element (absent: 0).
func attrNums(a []xml.Attr, names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for _, x := range a {
		for i, n := range names {
			if x.Name.Local == n {
				v, err := strconv.ParseFloat(x.Value, 64)
				if err != nil {
					return nil, fmt.Errorf("%s=%q: %w", n, x.Value, err)
				}
				out[i] = v
			}
		}
	}
	return out, nil
}

func attrValue(a []xml.Attr, name string) string {
	for _, x := range a {
		if x.Name.Local == name {
			return x.Value
		}
	}
	return ""
}

// canvas makes the image from the root's width and height, white.
func (r *raster) canvas(a []xml.Attr) error {
	v, err := attrNums(a, "width", "height")
	if err != nil {
		return err
	}
	// The drawing is in the image's own pixels: a viewBox may only restate them.
	if vb := attrValue(a, "viewBox"); vb != "" {
		if n, err := numbers(vb); err != nil || len(n) != 4 || n[0] != 0 || n[1] != 0 || n[2] != v[0] || n[3] != v[1] {
			return fmt.Errorf("viewBox %q differs from the size %v×%v", vb, v[0], v[1])
		}
	}
	w, h := int(math.Round(v[0]*r.scale)), int(math.Round(v[1]*r.scale))
	if w <= 0 || h <= 0 || w*h > 1<<28 {
		return fmt.Errorf("image of %d×%d pixels", w, h)
	}
	r.img = image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(r.img, r.img.Bounds(), image.White, image.Point{}, draw.Src)
	return nil
}

// shape fills and strokes one geometric element.
func (r *raster) shape(name string, a []xml.Attr, st style) error {
	s := r.scale
	var fill [][]pt       // closed outlines to fill
	var lines [][]pt      // polylines to stroke
	var closed []bool     // whether each polyline is closed
	var strokeArea [][]pt // outlines of a stroke computed here (rect)
	switch name {
	case "rect":
		v, err := attrNums(a, "x", "y", "width", "height")
		if err != nil {
			return err
		}
		x, y, w, h := v[0]*s, v[1]*s, v[2]*s, v[3]*s
		if w <= 0 || h <= 0 {
			return nil
		}
		fill = [][]pt{{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}}}
		// A rectangle's stroke with mitred corners: four non-overlapping bars.
		hw := st.strokeWidth * s / 2
		bar := func(x0, y0, x1, y1 float64) []pt { return []pt{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}} }
		strokeArea = [][]pt{bar(x-hw, y-hw, x+w+hw, y+hw), bar(x-hw, y+h-hw, x+w+hw, y+h+hw),
			bar(x-hw, y+hw, x+hw, y+h-hw), bar(x+w-hw, y+hw, x+w+hw, y+h-hw)}
	case "line":
		v, err := attrNums(a, "x1", "y1", "x2", "y2")
		if err != nil {
			return err
		}
		lines, closed = [][]pt{{{v[0] * s, v[1] * s}, {v[2] * s, v[3] * s}}}, []bool{false}
		st.fill = "none" // a line has no inside
	case "circle":
		v, err := attrNums(a, "cx", "cy", "r")
		if err != nil {
			return err
		}
		c := circle(v[0]*s, v[1]*s, v[2]*s)
		fill, lines, closed = [][]pt{c}, [][]pt{c}, []bool{true}
	case "polygon":
		p, err := numbers(attrValue(a, "points"))
		if err != nil || len(p)%2 != 0 {
			return fmt.Errorf("points %q", attrValue(a, "points"))
		}
		var poly []pt
		for i := 0; i < len(p); i += 2 {
			poly = append(poly, pt{p[i] * s, p[i+1] * s})
		}
		fill, lines, closed = [][]pt{poly}, [][]pt{poly}, []bool{true}
	case "path":
		subs, cl, err := pathData(attrValue(a, "d"), s)
		if err != nil {
			return err
		}
		fill, lines, closed = subs, subs, cl
	}
	if col, ok, err := paint(st.fill, st.fillOpacity); err != nil {
		return err
	} else if ok {
		r.fillPolygons(fill, col)
	}
	col, ok, err := paint(st.stroke, 1)
	if err != nil || !ok || st.strokeWidth <= 0 {
		return err
	}
	if strokeArea == nil {
		for i, l := range lines {
			strokeArea = append(strokeArea, strokeOutline(l, closed[i], st.strokeWidth*s/2)...)
		}
	}
	r.fillPolygons(strokeArea, col)
	return nil
}

// numbers parses a list of numbers separated by spaces or commas.
func numbers(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\t' }) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// pathData parses path data of absolute M, L and Z commands into subpaths, scaled.
func pathData(d string, s float64) (subs [][]pt, closed []bool, err error) {
	// Put spaces around the commands, then read command and coordinate tokens in turn.
	var b strings.Builder
	for _, c := range d {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			if c != 'M' && c != 'L' && c != 'Z' {
				return nil, nil, fmt.Errorf("path command %q not supported", c)
			}
			b.WriteString(" " + string(c) + " ")
		} else {
			b.WriteRune(c)
		}
	}
	toks := strings.FieldsFunc(b.String(), func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\t' })
	cmd := ""
	for i := 0; i < len(toks); {
		switch toks[i] {
		case "M", "L":
			cmd = toks[i]
			i++
			continue
		case "Z":
			if len(subs) == 0 {
				return nil, nil, fmt.Errorf("path %q: Z before M", d)
			}
			closed[len(closed)-1] = true
			cmd = ""
			i++
			continue
		}
		if cmd == "" || i+1 >= len(toks) {
			return nil, nil, fmt.Errorf("path %q: coordinates without a command", d)
		}
		x, ex := strconv.ParseFloat(toks[i], 64)
		y, ey := strconv.ParseFloat(toks[i+1], 64)
		if ex != nil || ey != nil {
			return nil, nil, fmt.Errorf("path %q: bad coordinates", d)
		}
		i += 2
		if cmd == "M" || len(subs) == 0 {
			subs, closed = append(subs, nil), append(closed, false)
			cmd = "L" // further pairs after M are line-tos
		}
		subs[len(subs)-1] = append(subs[len(subs)-1], pt{x * s, y * s})
	}
	return subs, closed, nil
}

// circle approximates a circle by a polygon fine enough that its sides are invisible.
func circle(cx, cy, r float64) []pt {
	n := max(12, int(math.Ceil(2*math.Pi*r/1.5)))
	out := make([]pt, n)
	for i := range out {
		a := 2 * math.Pi * float64(i) / float64(n)
		out[i] = pt{cx + r*math.Cos(a), cy + r*math.Sin(a)}
	}
	return out
}

// strokeOutline returns the area a polyline's stroke of half-width hw covers: a
// rectangle per segment (butt ends) and a disc at each joint (round joins, which at
// these widths look the same as SVG's default mitres).
func strokeOutline(l []pt, closed bool, hw float64) [][]pt {
	var out [][]pt
	n := len(l)
	if closed && n > 1 && l[0] != l[n-1] {
		l = append(append([]pt(nil), l...), l[0])
		n++
	}
	for i := 0; i+1 < n; i++ {
		a, b := l[i], l[i+1]
		dx, dy := b.x-a.x, b.y-a.y
		d := math.Hypot(dx, dy)
		if d == 0 {
			continue
		}
		nx, ny := -dy/d*hw, dx/d*hw
		out = append(out, []pt{{a.x + nx, a.y + ny}, {b.x + nx, b.y + ny}, {b.x - nx, b.y - ny}, {a.x - nx, a.y - ny}})
		if i > 0 || closed {
			out = append(out, circle(a.x, a.y, hw))
		}
	}
	return out
}

// fillPolygons fills the union of polygons with a colour, anti-aliased. The rasterizer
// adds the polygons' signed areas, so all are turned the same way round first; it works
// on the polygons' bounding box only, so small marks stay cheap on a large image.
func (r *raster) fillPolygons(polys [][]pt, col color.NRGBA) {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range polys {
		for _, q := range p {
			x0, y0, x1, y1 = math.Min(x0, q.x), math.Min(y0, q.y), math.Max(x1, q.x), math.Max(y1, q.y)
		}
	}
	if math.IsInf(x0, 0) {
		return
	}
	box := image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1))).Intersect(r.img.Bounds())
	if box.Empty() {
		return
	}
	r.z.Reset(box.Dx(), box.Dy())
	for _, p := range polys {
		if len(p) < 3 {
			continue
		}
		area := 0.0
		for i := range p {
			j := (i + 1) % len(p)
			area += p[i].x*p[j].y - p[j].x*p[i].y
		}
		at := func(i int) pt {
			if area < 0 {
				i = len(p) - 1 - i
			}
			return pt{p[i].x - float64(box.Min.X), p[i].y - float64(box.Min.Y)}
		}
		q := at(0)
		r.z.MoveTo(float32(q.x), float32(q.y))
		for i := 1; i < len(p); i++ {
			q = at(i)
			r.z.LineTo(float32(q.x), float32(q.y))
		}
		r.z.ClosePath()
	}
	r.z.Draw(r.img, box, image.NewUniform(col), image.Point{})
}

// textRun is a <text> element being read: its style, attributes and characters.
type textRun struct {
	st    style
	attrs []xml.Attr
	s     strings.Builder
}

var fonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	var f [2]*opentype.Font
	var err error
	if f[0], err = opentype.Parse(goregular.TTF); err != nil {
		return f, err
	}
	f[1], err = opentype.Parse(gobold.TTF)
	return f, err
})

// face returns the font face of a size in image pixels.
func (r *raster) face(size float64, bold bool) (xfont.Face, error) {
	k := faceKey{size, bold}
	if f, ok := r.faces[k]; ok {
		return f, nil
	}
	fs, err := fonts()
	if err != nil {
		return nil, err
	}
	i := 0
	if bold {
		i = 1
	}
	f, err := opentype.NewFace(fs[i], &opentype.FaceOptions{Size: size, DPI: 72, Hinting: xfont.HintingNone})
	if err != nil {
		return nil, err
	}
	r.faces[k] = f
	return f, nil
}

// transform parses "translate(tx ty)" and "rotate(a)" (a multiple of 90 turning left or
// none: -90) as the text of a y axis uses them.
func transform(s string) (tx, ty float64, rotated bool, err error) {
	rest := strings.TrimSpace(s)
	for rest != "" {
		open, end := strings.Index(rest, "("), strings.Index(rest, ")")
		if open < 0 || end < open {
			return 0, 0, false, fmt.Errorf("transform %q", s)
		}
		fn, args := strings.TrimSpace(rest[:open]), rest[open+1:end]
		rest = strings.TrimSpace(rest[end+1:])
		v, err := numbers(args)
		if err != nil {
			return 0, 0, false, fmt.Errorf("transform %q", s)
		}
		switch {
		case fn == "translate" && len(v) == 2 && !rotated:
			tx, ty = tx+v[0], ty+v[1]
		case fn == "translate" && len(v) == 1 && !rotated:
			tx += v[0]
		case fn == "rotate" && len(v) == 1 && (v[0] == -90 || v[0] == 270):
			rotated = !rotated
		case fn == "rotate" && len(v) == 1 && v[0] == 0:
		default:
			return 0, 0, false, fmt.Errorf("transform %q not supported (translate, then rotate(-90))", s)
		}
	}
	return tx, ty, rotated, nil
}

// text draws a <text> element: its glyphs are drawn onto a mask at the anchor's offset,
// then the mask, turned a quarter left for rotate(-90), is painted with the fill.
func (r *raster) text(t *textRun) error {
	s := strings.Join(strings.Fields(t.s.String()), " ")
	col, ok, err := paint(t.st.fill, t.st.fillOpacity)
	if err != nil || !ok || s == "" {
		return err
	}
	v, err := attrNums(t.attrs, "x", "y")
	if err != nil {
		return err
	}
	tx, ty, rotated, err := transform(attrValue(t.attrs, "transform"))
	if err != nil {
		return err
	}
	face, err := r.face(t.st.fontSize*r.scale, t.st.bold)
	if err != nil {
		return err
	}
	adv := float64(xfont.MeasureString(face, s)) / 64
	x := v[0] * r.scale
	switch t.st.anchor {
	case "middle":
		x -= adv / 2
	case "end":
		x -= adv
	}
	y := v[1] * r.scale
	if !rotated { // translate only: fold it into the position
		x, y, tx, ty = x+tx*r.scale, y+ty*r.scale, 0, 0
	}
	// The mask's pixel (i, j) covers [ox-pad+i, +1) × [oy-base+j, +1) of the text's frame.
	const pad = 2
	m := face.Metrics()
	ox, oy := math.Floor(x), math.Floor(y)
	base := m.Ascent.Ceil() + pad
	w, h := int(math.Ceil(adv))+2*pad+1, base+m.Descent.Ceil()+pad
	mask := image.NewAlpha(image.Rect(0, 0, w, h))
	dr := xfont.Drawer{Dst: mask, Src: image.Opaque, Face: face,
		Dot: fixed.Point26_6{X: fixed.Int26_6(math.Round((pad + x - ox) * 64)), Y: fixed.Int26_6(math.Round((float64(base) + y - oy) * 64))}}
	dr.DrawString(s)
	src := image.NewUniform(col)
	if !rotated {
		at := image.Pt(int(ox)-pad, int(oy)-base)
		draw.DrawMask(r.img, mask.Bounds().Add(at), src, image.Point{}, mask, image.Point{}, draw.Over)
		return nil
	}
	// rotate(-90) maps the text's frame (u, v) to (tx+v, ty-u): mask pixel (i, j) goes to
	// column tx+oy-base+j and row ty-ox+pad-1-i.
	turned := image.NewAlpha(image.Rect(0, 0, h, w))
	for j := 0; j < h; j++ {
		for i := 0; i < w; i++ {
			turned.SetAlpha(j, w-1-i, mask.AlphaAt(i, j))
		}
	}
	TX, TY := int(math.Round(tx*r.scale)), int(math.Round(ty*r.scale))
	at := image.Pt(TX+int(oy)-base, TY-int(ox)+pad-w)
	draw.DrawMask(r.img, turned.Bounds().Add(at), src, image.Point{}, turned, image.Point{}, draw.Over)
	return nil
}
