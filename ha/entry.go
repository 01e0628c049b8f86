package ha

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/queue"
)

// A log entry's znode holds the entry's wire form (queue.EncodeEntry),
// compressed: a version byte, then either the deflated entry (inline) or,
// for an entry too large for one znode, a pointer to its chunks under
// <root>/blobs/<index>/ (written first; a chunk is not fenced, the pointer
// in the log is, and it carries the chunks' digest).
const (
	formatInline byte = 1
	formatBlob   byte = 2

	// maxInline is the largest znode colocd writes: below the servers'
	// default jute.maxbuffer (1 MiB) with room for a multi's other ops.
	maxInline = 768 << 10
	// maxEntry bounds an entry's uncompressed size when it is read back.
	maxEntry = 256 << 20
)

// errBadEntry: a log znode that is not an entry this build reads.
var errBadEntry = errors.New("ha: malformed log entry znode")

type blobRef struct {
	Chunks int    `json:"chunks"`
	Bytes  int    `json:"bytes"`
	SHA256 []byte `json:"sha256"`
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func inflate(b []byte, limit int64) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("inflates beyond %d bytes", limit)
	}
	return out, nil
}

// encodeEntry is e's znode data and, for a large entry, its chunks.
func encodeEntry(e queue.Entry) (data []byte, chunks [][]byte, err error) {
	raw, err := queue.EncodeEntry(e)
	if err != nil {
		return nil, nil, err
	}
	z := deflate(raw)
	if len(z) < maxInline {
		return append([]byte{formatInline}, z...), nil, nil
	}
	for off := 0; off < len(z); off += maxInline {
		chunks = append(chunks, z[off:min(off+maxInline, len(z))])
	}
	sum := sha256.Sum256(z)
	ref, _ := json.Marshal(blobRef{Chunks: len(chunks), Bytes: len(z), SHA256: sum[:]})
	return append([]byte{formatBlob}, ref...), chunks, nil
}

// decodeEntry reads a log znode's data; a blob is fetched with get.
func decodeEntry(data []byte, blob func(ref blobRef) ([]byte, error)) (queue.Entry, error) {
	if len(data) == 0 {
		return queue.Entry{}, fmt.Errorf("%w: empty", errBadEntry)
	}
	z := data[1:]
	switch data[0] {
	case formatInline:
	case formatBlob:
		var ref blobRef
		if err := json.Unmarshal(z, &ref); err != nil || ref.Chunks < 1 || ref.Bytes < 0 {
			return queue.Entry{}, fmt.Errorf("%w: blob pointer %q", errBadEntry, z)
		}
		var err error
		if z, err = blob(ref); err != nil {
			return queue.Entry{}, err
		}
		if sum := sha256.Sum256(z); len(z) != ref.Bytes || !bytes.Equal(sum[:], ref.SHA256) {
			return queue.Entry{}, fmt.Errorf("%w: its chunks do not match their digest", errBadEntry)
		}
	default:
		return queue.Entry{}, fmt.Errorf("%w: format byte %d", errBadEntry, data[0])
	}
	raw, err := inflate(z, maxEntry)
	if err != nil {
		return queue.Entry{}, fmt.Errorf("%w: %v", errBadEntry, err)
	}
	e, err := queue.DecodeEntry(raw)
	if err != nil {
		return queue.Entry{}, fmt.Errorf("%w: %w", errBadEntry, err)
	}
	return e, nil
}

// putChunks writes chunks under parent (created if missing), replacing
// what a failed attempt left there.
func putChunks(s *session, p paths, parent string, chunks [][]byte) error {
	if _, err := s.conn.Create(parent, nil, 0, s.acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("ha: create %s: %w", parent, err)
	}
	for n, c := range chunks {
		path := p.chunk(parent, n)
		_, err := s.conn.Create(path, c, 0, s.acl)
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = s.conn.Set(path, c, -1)
		}
		if err != nil {
			return fmt.Errorf("ha: write %s: %w", path, err)
		}
	}
	return nil
}

// getChunks reads n chunks under parent, at most limit bytes in all.
func getChunks(s *session, p paths, parent string, n, limit int) ([]byte, error) {
	var out []byte
	for i := range n {
		c, _, err := s.conn.Get(p.chunk(parent, i))
		if err != nil {
			return nil, fmt.Errorf("ha: read %s: %w", p.chunk(parent, i), err)
		}
		if len(out)+len(c) > limit {
			return nil, fmt.Errorf("ha: %s holds more than %d bytes", parent, limit)
		}
		out = append(out, c...)
	}
	return out, nil
}
