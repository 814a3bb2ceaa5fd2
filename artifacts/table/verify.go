package table

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Arrow's Go IPC reader trusts the flatbuffers in a file: a corrupt vector
// length makes it allocate (and crash on) absurd amounts of memory, which no
// recover can catch. verifyArrowFile therefore checks, before Arrow sees the
// bytes, that every flatbuffer table, vector and string Arrow will read from
// the footer, schema and record-batch messages lies inside the file, and
// rejects what Decode does not support anyway (dictionaries, nested and
// non-int64/float64/utf8 types). It does not interpret column data; Arrow's
// own validation does that.

var arrowMagic = []byte("ARROW1")

// Flatbuffer schema constants from Arrow's Schema.fbs / Message.fbs / File.fbs.
const (
	typeInt           = 2
	typeFloatingPoint = 3
	typeUtf8          = 5
	typeBool          = 6
	typeLargeUtf8     = 20

	headerRecordBatch = 3

	blockSize     = 24 // struct Block { offset: long; metaDataLength: int; bodyLength: long }
	fieldNodeSize = 16 // struct FieldNode { length: long; null_count: long }
	bufferSize    = 16 // struct Buffer { offset: long; length: long }
)

var errBounds = errors.New("flatbuffer reference out of bounds")

func verifyArrowFile(b []byte) error {
	const tail = 4 + 6 // footer length + magic
	if len(b) < 8+tail || !bytes.HasPrefix(b, arrowMagic) || !bytes.HasSuffix(b, arrowMagic) {
		return errors.New("not an Arrow IPC file (bad magic)")
	}
	footerLen := int64(binary.LittleEndian.Uint32(b[len(b)-tail:]))
	end := int64(len(b) - tail)
	if footerLen <= 0 || footerLen > end-8 {
		return fmt.Errorf("bad footer length %d", footerLen)
	}
	fb := flatbuf(b[end-footerLen : end])
	footer, err := fb.root()
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	// Footer: 0 version: short; 1 schema: Schema; 2 dictionaries: [Block]; 3 recordBatches: [Block].
	if err := footer.scalar(0, 2); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	schema, ok, err := footer.table(1)
	if err != nil || !ok {
		return fmt.Errorf("footer: no schema (%v)", err)
	}
	if err := verifySchema(schema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if _, n, err := footer.vector(2, blockSize); err != nil || n != 0 {
		return fmt.Errorf("footer: dictionaries are not supported (%d, %v)", n, err)
	}
	start, n, err := footer.vector(3, blockSize)
	if err != nil {
		return fmt.Errorf("footer: record batches: %w", err)
	}
	dataEnd := end - footerLen
	for i := range n {
		p := start + i*blockSize
		off := int64(binary.LittleEndian.Uint64(fb[p:]))
		meta := int64(int32(binary.LittleEndian.Uint32(fb[p+8:])))
		body := int64(binary.LittleEndian.Uint64(fb[p+16:]))
		if off < 8 || meta < 8 || body < 0 || off > dataEnd || meta > dataEnd-off || body > dataEnd-off-meta {
			return fmt.Errorf("record batch %d: block (offset %d, metadata %d, body %d) outside the file", i, off, meta, body)
		}
		mb := b[off : off+meta]
		prefix := 4
		if binary.LittleEndian.Uint32(mb) == 0xFFFFFFFF {
			prefix = 8
		}
		if err := verifyMessage(flatbuf(mb[prefix:])); err != nil {
			return fmt.Errorf("record batch %d: %w", i, err)
		}
	}
	return nil
}

func verifySchema(s fbTable) error {
	// Schema: 0 endianness: short; 1 fields: [Field]; 2 custom_metadata: [KeyValue]; 3 features: [long].
	if err := s.scalar(0, 2); err != nil {
		return err
	}
	fields, err := s.tables(1)
	if err != nil {
		return err
	}
	for i, f := range fields {
		if err := verifyField(f); err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
	}
	if err := verifyKeyValues(s, 2); err != nil {
		return err
	}
	_, _, err = s.vector(3, 8)
	return err
}

func verifyField(f fbTable) error {
	// Field: 0 name: string; 1 nullable: bool; 2 type_type: ubyte; 3 type: union;
	// 4 dictionary: DictionaryEncoding; 5 children: [Field]; 6 custom_metadata: [KeyValue].
	name, err := f.str(0)
	if err != nil {
		return err
	}
	if err := f.scalar(1, 1); err != nil {
		return err
	}
	if err := f.scalar(2, 1); err != nil {
		return err
	}
	tt := f.u8(2)
	typ, ok, err := f.table(3)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("column %q has no type", name)
	}
	switch tt {
	case typeInt: // Int: 0 bitWidth: int; 1 is_signed: bool
		if err := typ.scalar(0, 4); err != nil {
			return err
		}
		if err := typ.scalar(1, 1); err != nil {
			return err
		}
	case typeFloatingPoint: // FloatingPoint: 0 precision: short
		if err := typ.scalar(0, 2); err != nil {
			return err
		}
	case typeUtf8, typeLargeUtf8, typeBool:
	default:
		return fmt.Errorf("column %q has unsupported Arrow type #%d; only int64, float64, utf8 and bool are supported", name, tt)
	}
	if _, ok, err := f.table(4); err != nil || ok {
		return fmt.Errorf("column %q is dictionary-encoded, which is not supported", name)
	}
	if _, n, err := f.vector(5, 4); err != nil || n != 0 {
		return fmt.Errorf("column %q is nested, which is not supported", name)
	}
	return verifyKeyValues(f, 6)
}

func verifyKeyValues(t fbTable, slot int) error {
	kvs, err := t.tables(slot)
	if err != nil {
		return err
	}
	for _, kv := range kvs { // KeyValue: 0 key: string; 1 value: string
		if _, err := kv.str(0); err != nil {
			return err
		}
		if _, err := kv.str(1); err != nil {
			return err
		}
	}
	return nil
}

func verifyMessage(fb flatbuf) error {
	// Message: 0 version: short; 1 header_type: ubyte; 2 header: union; 3 bodyLength: long; 4 custom_metadata: [KeyValue].
	m, err := fb.root()
	if err != nil {
		return err
	}
	for slot, size := range []int{0: 2, 1: 1, 3: 8} {
		if size > 0 {
			if err := m.scalar(slot, size); err != nil {
				return err
			}
		}
	}
	if m.u8(1) != headerRecordBatch {
		return fmt.Errorf("message is type #%d, not a record batch", m.u8(1))
	}
	rb, ok, err := m.table(2)
	if err != nil || !ok {
		return fmt.Errorf("record batch header missing (%v)", err)
	}
	// RecordBatch: 0 length: long; 1 nodes: [FieldNode]; 2 buffers: [Buffer];
	// 3 compression: BodyCompression; 4 variadicBufferCounts: [long].
	if err := rb.scalar(0, 8); err != nil {
		return err
	}
	if _, _, err := rb.vector(1, fieldNodeSize); err != nil {
		return err
	}
	if _, _, err := rb.vector(2, bufferSize); err != nil {
		return err
	}
	if c, ok, err := rb.table(3); err != nil {
		return err
	} else if ok { // BodyCompression: 0 codec: byte; 1 method: byte
		if err := c.scalar(0, 1); err != nil {
			return err
		}
		if err := c.scalar(1, 1); err != nil {
			return err
		}
	}
	if _, _, err := rb.vector(4, 8); err != nil {
		return err
	}
	return verifyKeyValues(m, 4)
}

// flatbuf is a flatbuffer; its methods bounds-check everything they read.
type flatbuf []byte

// fbTable is a verified table: its vtable and inline part lie inside buf.
type fbTable struct {
	buf    flatbuf
	pos    int
	vt     int
	vtSize int
	inline int
}

func (b flatbuf) u32(p int) (int, error) {
	if p < 0 || p > len(b)-4 {
		return 0, errBounds
	}
	return int(binary.LittleEndian.Uint32(b[p:])), nil
}

func (b flatbuf) root() (fbTable, error) {
	off, err := b.u32(0)
	if err != nil {
		return fbTable{}, err
	}
	return b.tableAt(off)
}

func (b flatbuf) tableAt(pos int) (fbTable, error) {
	if pos < 0 || pos > len(b)-4 {
		return fbTable{}, errBounds
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	if vt < 0 || vt > len(b)-4 {
		return fbTable{}, errBounds
	}
	vtSize := int(binary.LittleEndian.Uint16(b[vt:]))
	inline := int(binary.LittleEndian.Uint16(b[vt+2:]))
	if vtSize < 4 || vtSize%2 != 0 || vtSize > len(b)-vt || inline < 4 || inline > len(b)-pos {
		return fbTable{}, errBounds
	}
	return fbTable{buf: b, pos: pos, vt: vt, vtSize: vtSize, inline: inline}, nil
}

// field returns the offset of slot within the table, or 0 if absent.
func (t fbTable) field(slot int) int {
	p := 4 + 2*slot
	if p+2 > t.vtSize {
		return 0
	}
	return int(binary.LittleEndian.Uint16(t.buf[t.vt+p:]))
}

// scalar checks that slot, if present, holds size bytes inside the table.
func (t fbTable) scalar(slot, size int) error {
	if fo := t.field(slot); fo != 0 && fo+size > t.inline {
		return errBounds
	}
	return nil
}

func (t fbTable) u8(slot int) byte {
	if fo := t.field(slot); fo != 0 && fo < t.inline {
		return t.buf[t.pos+fo]
	}
	return 0
}

// ref follows the offset in slot; ok is false if the slot is absent.
func (t fbTable) ref(slot int) (target int, ok bool, err error) {
	fo := t.field(slot)
	if fo == 0 {
		return 0, false, nil
	}
	if fo+4 > t.inline {
		return 0, false, errBounds
	}
	off, _ := t.buf.u32(t.pos + fo)
	target = t.pos + fo + off
	if target > len(t.buf) {
		return 0, false, errBounds
	}
	return target, true, nil
}

func (t fbTable) table(slot int) (fbTable, bool, error) {
	p, ok, err := t.ref(slot)
	if err != nil || !ok {
		return fbTable{}, false, err
	}
	tb, err := t.buf.tableAt(p)
	return tb, err == nil, err
}

// vector returns the start and length of the vector in slot (0, 0 if absent)
// after checking that n elements of elemSize bytes fit.
func (t fbTable) vector(slot, elemSize int) (start, n int, err error) {
	p, ok, err := t.ref(slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	n, err = t.buf.u32(p)
	if err != nil {
		return 0, 0, err
	}
	start = p + 4
	if uint64(n)*uint64(elemSize) > uint64(len(t.buf)-start) {
		return 0, 0, errBounds
	}
	return start, n, nil
}

func (t fbTable) str(slot int) (string, error) {
	start, n, err := t.vector(slot, 1)
	if err != nil {
		return "", err
	}
	return string(t.buf[start : start+n]), nil
}

func (t fbTable) tables(slot int) ([]fbTable, error) {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return nil, err
	}
	out := make([]fbTable, n)
	for i := range n {
		p := start + 4*i
		off, _ := t.buf.u32(p)
		if out[i], err = t.buf.tableAt(p + off); err != nil {
			return nil, err
		}
	}
	return out, nil
}
