package daemon

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandTagKey: the key is made once (0600, 32 bytes) and read back
// at every start; one that others may read, or too short, is refused.
func TestCommandTagKey(t *testing.T) {
	dir := t.TempDir()
	key, err := commandTagKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, tagKeyFile)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 32 || fi.Mode().Perm() != 0o600 {
		t.Errorf("key of %d bytes, mode %v; want 32 bytes, 0600", len(key), fi.Mode().Perm())
	}
	again, err := commandTagKey(dir)
	if err != nil || !bytes.Equal(key, again) {
		t.Errorf("second start: %x, %v; want the same key", again, err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := commandTagKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a key others may read: %v, want a refusal", err)
	}
	if err := os.WriteFile(p, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := commandTagKey(dir); err == nil || !strings.Contains(err.Error(), "5 bytes") {
		t.Errorf("a short key: %v, want a refusal", err)
	}
}
