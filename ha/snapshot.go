package ha

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
)

// maxSnapshot bounds a snapshot's compressed size when it is read back
// (100,000 jobs compress to about 15 MB).
const maxSnapshot = 512 << 20

// manifest is <root>/snapshot: the snapshot a new or lagging replica
// installs, under <root>/snapshots/<index>/.
type manifest struct {
	Index   uint64    `json:"index"` // the last entry the snapshot holds
	Epoch   uint64    `json:"epoch"`
	Chunks  int       `json:"chunks"`
	Bytes   int       `json:"bytes"` // compressed
	SHA256  []byte    `json:"sha256"`
	TakenAt time.Time `json:"taken_at"`
	By      string    `json:"by"`
}

// manifest reads <root>/snapshot; ok is false when there is none yet.
func (r *Replica) manifest(s *session) (manifest, bool, error) {
	b, _, err := s.conn.Get(r.p.snapshot())
	if errors.Is(err, zk.ErrNoNode) || (err == nil && len(b) == 0) {
		return manifest{}, false, nil
	}
	if err != nil {
		return manifest{}, false, fmt.Errorf("ha: read %s: %w", r.p.snapshot(), err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Chunks < 1 {
		return manifest{}, false, fmt.Errorf("ha: %s does not decode: %v", r.p.snapshot(), err)
	}
	return m, true, nil
}

// install replaces the store's content with snapshot m.
func (r *Replica) install(s *session, m manifest) error {
	t0 := time.Now()
	z, err := getChunks(s, r.p, r.p.snapshotDir(m.Index), m.Chunks, min(m.Bytes, maxSnapshot))
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(z); len(z) != m.Bytes || !bytes.Equal(sum[:], m.SHA256) {
		return fmt.Errorf("ha: snapshot %d does not match its digest", m.Index)
	}
	f, err := os.CreateTemp(r.opts.Dir, "install-*.db")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err == nil {
		_, err = io.Copy(f, zr)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ha: unpack snapshot %d: %w", m.Index, err)
	}
	got, err := r.store.InstallSnapshot(f.Name())
	if err != nil {
		return fmt.Errorf("ha: install snapshot %d: %w", m.Index, err)
	}
	if got != m.Index {
		return fmt.Errorf("ha: snapshot %d holds the store at entry %d", m.Index, got)
	}
	r.event(eventSnapshotInstalled)
	r.log.Info("installed a snapshot", "index", m.Index, "bytes", m.Bytes, "took", time.Since(t0).Round(time.Millisecond))
	return nil
}

// packSnapshot writes the store's snapshot, compressed, and its manifest.
func (r *Replica) packSnapshot(epoch uint64) (manifest, []byte, error) {
	path, idx, err := r.store.SnapshotFile(r.opts.Dir)
	if err != nil {
		return manifest{}, nil, fmt.Errorf("ha: snapshot the store: %w", err)
	}
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		return manifest{}, nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := io.Copy(zw, f); err != nil {
		return manifest{}, nil, err
	}
	if err := zw.Close(); err != nil {
		return manifest{}, nil, err
	}
	z := buf.Bytes()
	sum := sha256.Sum256(z)
	m := manifest{Index: idx, Epoch: epoch, Chunks: (len(z) + maxInline - 1) / maxInline, Bytes: len(z),
		SHA256: sum[:], TakenAt: time.Now().UTC().Round(time.Millisecond), By: r.cfg.ID}
	return m, z, nil
}

// putSnapshot writes a packed snapshot's chunks.
func (r *Replica) putSnapshot(s *session, m manifest, z []byte) error {
	chunks := make([][]byte, 0, m.Chunks)
	for off := 0; off < len(z); off += maxInline {
		chunks = append(chunks, z[off:min(off+maxInline, len(z))])
	}
	return putChunks(s, r.p, r.p.snapshotDir(m.Index), chunks)
}

// seed makes this store's history the cluster's first snapshot, before
// the cluster has any: creating the manifest fails if another replica
// seeded first.
func (r *Replica) seed(s *session) error {
	m, z, err := r.packSnapshot(0)
	if err != nil {
		return err
	}
	if err := r.putSnapshot(s, m, z); err != nil {
		return err
	}
	b, _ := json.Marshal(m)
	if _, err := s.conn.Create(r.p.snapshot(), b, 0, s.acl); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("%w: another replica seeded the cluster first", errOtherCluster)
		}
		return fmt.Errorf("ha: create %s: %w", r.p.snapshot(), err)
	}
	return nil
}

// maybeSnapshot starts a snapshot when the log has grown SnapshotEvery
// entries past the last one (one at a time, in the background). Entries
// applied while one is being taken count when it ends: if they are
// already SnapshotEvery past it, the next starts then, not at the next
// append (a burst that ends during a snapshot would otherwise leave its
// log untruncated until more work comes). A failed snapshot waits for the
// next append.
func (t *Term) maybeSnapshot(applied uint64) {
	t.snapMu.Lock()
	defer t.snapMu.Unlock()
	t.lastApplied = max(t.lastApplied, applied)
	if t.snapping || t.lastApplied < t.snapshot+t.r.cfg.SnapshotEvery {
		return
	}
	t.snapping = true
	go func() {
		err := t.takeSnapshot()
		t.snapMu.Lock()
		t.snapping = false
		t.snapMu.Unlock()
		if err != nil {
			if t.ctx.Err() == nil {
				t.r.log.Warn("snapshot failed; the log grows until the next one", "err", err)
			}
			return
		}
		if t.ctx.Err() == nil {
			t.maybeSnapshot(0)
		}
	}()
}

// snapshotHook, when set (tests only), runs in each snapshot after the
// store is packed, before the snapshot is written.
var snapshotHook func()

// takeSnapshot writes a snapshot, points the manifest at it (fenced), and
// deletes what it makes unneeded: the older snapshots, the log entries
// and blobs more than KeepEntries behind it.
func (t *Term) takeSnapshot() error {
	r, s := t.r, t.sess
	t0 := time.Now()
	m, z, err := r.packSnapshot(t.epoch)
	if err != nil {
		return err
	}
	if snapshotHook != nil {
		snapshotHook()
	}
	if err := r.putSnapshot(s, m, z); err != nil {
		return err
	}
	b, _ := json.Marshal(m)
	ok, _, err := s.conn.Exists(r.p.snapshot())
	if err != nil {
		return err
	}
	set := any(&zk.SetDataRequest{Path: r.p.snapshot(), Data: b, Version: -1})
	if !ok {
		set = &zk.CreateRequest{Path: r.p.snapshot(), Data: b, Acl: s.acl}
	}
	if _, err := s.conn.Multi(t.fenced(set)...); err != nil {
		return fmt.Errorf("ha: point %s at snapshot %d: %w", r.p.snapshot(), m.Index, err)
	}
	t.snapMu.Lock()
	t.snapshot = m.Index
	t.snapMu.Unlock()
	r.event(eventSnapshotTaken)
	r.log.Info("snapshot taken", "index", m.Index, "bytes", m.Bytes, "chunks", m.Chunks, "took", time.Since(t0).Round(time.Millisecond))
	return t.truncate(m.Index)
}

// truncate deletes, fenced and in batches, every snapshot but the one at
// keep, and the log entries and blobs below keep − KeepEntries.
func (t *Term) truncate(keep uint64) error {
	r, s := t.r, t.sess
	below := uint64(0)
	if keep > r.cfg.KeepEntries {
		below = keep - r.cfg.KeepEntries
	}
	var doomed []string
	for _, dir := range []string{r.p.log(), r.p.blobs(), r.p.snapshots()} {
		names, _, err := s.conn.Children(dir)
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, n := range names {
			i, err := strconv.ParseUint(n, 10, 64)
			if err != nil {
				continue
			}
			switch {
			case dir == r.p.snapshots() && i != keep:
			case dir != r.p.snapshots() && i < below:
			default:
				continue
			}
			if dir != r.p.log() {
				kids, _, err := s.conn.Children(dir + "/" + n)
				if err != nil {
					return err
				}
				for _, k := range kids {
					doomed = append(doomed, dir+"/"+n+"/"+k)
				}
			}
			doomed = append(doomed, dir+"/"+n)
		}
	}
	const batch = 200
	for len(doomed) > 0 {
		n := min(batch, len(doomed))
		ops := make([]any, n)
		for i, p := range doomed[:n] {
			ops[i] = &zk.DeleteRequest{Path: p, Version: -1}
		}
		if _, err := s.conn.Multi(t.fenced(ops...)...); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("ha: truncate the log below %d: %w", below, err)
		}
		doomed = doomed[n:]
	}
	return nil
}
