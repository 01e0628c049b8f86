package yarnclient

import (
	"bytes"
	"testing"
)

// BenchmarkDecodeApps decodes an apps list of 2000 apps in the 3.x shape
// (resourceRequests included), about what a busy RM returns.
func BenchmarkDecodeApps(b *testing.B) {
	doc := readTestdata(b, "apps/hadoop-3.json")
	start := bytes.Index(doc, []byte(`"app":`)) + len(`"app":`)
	open := bytes.IndexByte(doc[start:], '[') + start
	end := bytes.LastIndexByte(doc, ']')
	items := bytes.TrimSpace(doc[open+1 : end])
	var body bytes.Buffer
	body.WriteString(`{"apps":{"app":[`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(items)
	}
	body.WriteString(`]}}`)
	apps, err := decodeApps(body.Bytes())
	if err != nil || len(apps) != 2000 || apps[1999].VCoreSeconds != 200 {
		b.Fatalf("decoded %d apps, %v", len(apps), err)
	}
	b.SetBytes(int64(body.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := decodeApps(body.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}
