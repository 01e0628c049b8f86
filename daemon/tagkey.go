package daemon

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/colocd/colocd/internal/yarncluster"
)

// tagKeyFile, in data_dir, holds the key that authenticates the tags of
// command submissions (yarncluster.WithTagKey): 32 random bytes made at
// the first start with yarn.submit command, readable by colocd only. A
// replica that takes over must hold the same file; a new key loses track
// of the applications of the jobs already admitted (they are parked).
const tagKeyFile = "yarn-tag.key"

// commandTagKey reads data_dir's tag key, making it first if there is
// none. A key that others may read (they could make any application pass
// for a job's) or that is too short is refused.
func commandTagKey(dataDir string) ([]byte, error) {
	p := filepath.Join(dataDir, tagKeyFile)
	for range 2 {
		key, err := readTagKey(p)
		if !errors.Is(err, fs.ErrNotExist) {
			return key, err
		}
		key = make([]byte, yarncluster.MinTagKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("make the command tag key: %w", err)
		}
		err = writeNew(p, key)
		if errors.Is(err, fs.ErrExist) {
			continue // made meanwhile: read it
		}
		if err != nil {
			return nil, fmt.Errorf("write the command tag key: %w", err)
		}
		return key, nil
	}
	return nil, fmt.Errorf("command tag key %s: neither readable nor made", p)
}

func readTagKey(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("command tag key %s: mode %v lets others read it (and forge the tags of command submissions); chmod 600 it",
			p, fi.Mode().Perm())
	}
	key, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read the command tag key: %w", err)
	}
	if len(key) < yarncluster.MinTagKeyBytes {
		return nil, fmt.Errorf("command tag key %s: %d bytes, want at least %d", p, len(key), yarncluster.MinTagKeyBytes)
	}
	return key, nil
}

// writeNew writes b to a new file p (0600), durably: the file and its
// directory entry are synced.
func writeNew(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(p)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(p)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(p)
		return err
	}
	d, err := os.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
