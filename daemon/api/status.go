package api

import (
	"embed"
	"net/http"
	"path"
)

// web holds the status page: no external assets, no data (everything is
// fetched from the authenticated API by app.js).
//
//go:embed web/index.html web/app.js web/style.css
var web embed.FS

// statusCSP keeps the page to its own origin: no inline script, no
// external anything.
const statusCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// staticTypes are the content types of the embedded files (fixed here
// rather than read from the system's mime tables).
var staticTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

func serveStatic(name string) handlerFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ principal) error {
		return writeStatic(w, name)
	}
}

func serveStaticFile(w http.ResponseWriter, r *http.Request, _ principal) error {
	return writeStatic(w, r.PathValue("file"))
}

func writeStatic(w http.ResponseWriter, name string) error {
	ct, ok := staticTypes[path.Ext(name)]
	b, err := web.ReadFile("web/" + path.Base(name))
	if !ok || err != nil {
		return errorf(http.StatusNotFound, "", "no such file: %s", name)
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the URL may carry ?token=
	h.Set("Content-Security-Policy", statusCSP)
	h.Set("X-Frame-Options", "DENY")
	_, _ = w.Write(b)
	return nil
}
