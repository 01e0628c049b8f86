package kerberos_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/colocd/colocd/yarnclient/kerberos"
)

// hostileKDC is a KDC on 127.0.0.1 (TCP) that answers every request with
// a reply declaring size bytes, then sends bytes until the client hangs
// up; it counts what it wrote.
type hostileKDC struct {
	ln      net.Listener
	written atomic.Int64
	wg      sync.WaitGroup
}

func newHostileKDC(t *testing.T, size uint32) *hostileKDC {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &hostileKDC{ln: ln}
	block := bytes.Repeat([]byte{0x6b}, 32<<10)
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			k.wg.Add(1)
			go func() {
				defer k.wg.Done()
				defer c.Close()
				var h [4]byte
				if _, err := io.ReadFull(c, h[:]); err != nil {
					return
				}
				if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(h[:]))); err != nil {
					return
				}
				binary.BigEndian.PutUint32(h[:], size)
				if _, err := c.Write(h[:]); err != nil {
					return
				}
				for {
					n, err := c.Write(block)
					k.written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		k.wg.Wait()
	})
	return k
}

// TestKDCReplyCap: a KDC whose reply declares more than the cap on a
// reply (1 MiB), up to 4 GiB, and then never stops sending, fails the
// login with ErrReplyTooLarge naming the KDC, promptly and with bounded
// memory. gokrb5 alone would allocate the declared length (4 GiB) and
// read until its 5 s deadline.
func TestKDCReplyCap(t *testing.T) {
	for name, size := range map[string]uint32{"4 GiB": 0xffffffff, "just over 1 MiB": 1<<20 + 1} {
		t.Run(name, func(t *testing.T) {
			kdc := newHostileKDC(t, size)
			addr := kdc.ln.Addr().String()
			conf := writeFile(t, "[libdefaults]\n default_realm = EXAMPLE.COM\n[realms]\n EXAMPLE.COM = {\n  kdc = "+addr+"\n }\n")
			a, err := kerberos.New(kerberos.Config{Principal: "colocd@EXAMPLE.COM", Keytab: writeKeytab(t, "colocd@EXAMPLE.COM"),
				Krb5Conf: conf, ServicePrincipal: "HTTP/rm.example.com"})
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(http.MethodGet, "http://rm.example.com:8088/ws/v1/cluster/info", nil)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err = a.Authenticate(req)
			runtime.ReadMemStats(&after)
			var ke *kerberos.Error
			if !errors.Is(err, kerberos.ErrReplyTooLarge) || !errors.Is(err, kerberos.ErrExchange) || !errors.As(err, &ke) ||
				!strings.Contains(err.Error(), "the reply of KDC "+addr) {
				t.Fatalf("err = %v, want a *kerberos.Error matching ErrReplyTooLarge naming the KDC %s", err, addr)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%v; %d bytes allocated, the KDC wrote %d", err, alloc, kdc.written.Load())
			if alloc > 16<<20 {
				t.Errorf("%d bytes allocated, want at most 16 MiB", alloc)
			}
			if n := kdc.written.Load(); n > 64<<20 {
				t.Errorf("the KDC got %d bytes out before the relay hung up", n)
			}
		})
	}
}
