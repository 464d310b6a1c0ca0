package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Who a request comes from, what it may change, and the cross-site rules
// (scenarios/scenario-format.md, "Owners, instructors and limits").
//
// A browser gets an unguessable owner token in an HttpOnly cookie on the
// first page the server serves it; the runs, scenarios, training jobs and
// policies it makes belong to that token. An API client may fetch a token
// (POST /api/token) and send it as X-Cclab-Token; a request with neither is
// owned by its IP address. Tokens are signed with a key the database keeps,
// so a client cannot invent one, and they outlive a restart. An
// instructor presents the instructor token once (GET /instructor?token=…,
// which sets a cookie) or on every API request (Authorization: Bearer).

const (
	ownerCookie      = "cclab_owner"
	instructorCookie = "cclab_instructor"
	tokenHeader      = "X-Cclab-Token"
	cookieMaxAge     = 400 * 24 * 3600 // the longest browsers keep a cookie
)

// identity is who a request comes from.
type identity struct {
	owner      string // "t:" + an owner token's id, or "ip:" + the remote address
	instructor bool
	label      string // X-Cclab-Client: a label (whoami shows it), never a quota key
}

type identityKey struct{}

// who is the request's identity (set by identify; an IP owner without it).
func who(r *http.Request) *identity {
	if id, ok := r.Context().Value(identityKey{}).(*identity); ok {
		return id
	}
	return &identity{owner: "ip:" + remoteIP(r)}
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// tokens signs and checks owner tokens and the instructor's credentials.
type tokens struct {
	key        []byte // signs owner tokens (kept in the database)
	instructor string // the instructor token ("": nobody is an instructor)
	instrMAC   string // what the instructor cookie holds: a MAC of the token, not the token
}

func (t *tokens) mac(msg string) []byte {
	h := hmac.New(sha256.New, t.key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// mint makes a new owner token: a random id and its MAC.
func (t *tokens) mint() (token, id string) {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	id = base64.RawURLEncoding.EncodeToString(b)
	return id + "." + base64.RawURLEncoding.EncodeToString(t.mac("owner\x00" + id)[:16]), id
}

// verify returns the id of a token this server made.
func (t *tokens) verify(token string) (string, bool) {
	id, sig, ok := strings.Cut(token, ".")
	if !ok || len(id) != 22 || len(sig) != 22 {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", false
	}
	return id, hmac.Equal(got, t.mac("owner\x00" + id)[:16])
}

// isInstructor checks the instructor cookie or an Authorization: Bearer
// header.
func (t *tokens) isInstructor(r *http.Request) bool {
	if t.instructor == "" {
		return false
	}
	for _, name := range []string{instructorCookie, "__Host-" + instructorCookie} {
		if c, err := r.Cookie(name); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(t.instrMAC)) == 1 {
			return true
		}
	}
	a := r.Header.Get("Authorization")
	if !strings.HasPrefix(a, "Bearer ") {
		return false
	}
	given := strings.TrimSpace(strings.TrimPrefix(a, "Bearer "))
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(t.instructor)) == 1
}

// cookieName is a cookie's name for this request: the __Host- prefix, and
// Secure, when the server is reached over TLS (a class's plain http server
// could not set either).
func cookieName(r *http.Request, name string) string {
	if r.TLS != nil {
		return "__Host-" + name
	}
	return name
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(r, name), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

func ownerToken(r *http.Request) string {
	for _, name := range []string{"__Host-" + ownerCookie, ownerCookie} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return strings.TrimSpace(r.Header.Get(tokenHeader))
}

// isPage reports whether a GET serves a page (where a browser without a
// token gets one), not the API, a stream, a fragment or a static file.
func isPage(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	for _, prefix := range []string{"/api/", "/ws/", "/static/", "/ui/"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return true
}

// identify puts the request's identity in its context, and gives a browser
// without a valid owner token one on the page it asks for (unless its IP
// address has been given too many this hour: it is then owned by that
// address, as an API client is).
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := &identity{label: strings.TrimSpace(r.Header.Get("X-Cclab-Client")), instructor: s.tok.isInstructor(r)}
		if len(id.label) > 128 {
			id.label = id.label[:128]
		}
		if tid, ok := s.tok.verify(ownerToken(r)); ok {
			id.owner = "t:" + tid
		} else if isPage(r) && s.limits.issue(remoteIP(r)) {
			token, tid := s.tok.mint()
			setCookie(w, r, ownerCookie, token, cookieMaxAge)
			id.owner = "t:" + tid
		} else {
			id.owner = "ip:" + remoteIP(r)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}

// handleToken gives an API client an owner token to send as X-Cclab-Token.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if !s.limits.issue(remoteIP(r)) {
		s.writeError(w, r, retryError(limitError(http.StatusTooManyRequests, "tokens-per-hour", "",
			"this address has been given %d owner tokens this hour, this server's limit (tokens-per-hour)", s.limits.get().TokensPerHour), time.Hour/time.Duration(max(s.limits.get().TokensPerHour, 1))))
		return
	}
	token, tid := s.tok.mint()
	writeJSON(w, http.StatusCreated, map[string]string{"token": token, "owner": "t:" + tid, "header": tokenHeader})
}

// handleInstructor is the instructor's sign-in: with the right token it
// sets the instructor cookie and goes to the class view.
func (s *Server) handleInstructor(w http.ResponseWriter, r *http.Request) {
	given := r.URL.Query().Get("token")
	if s.tok.instructor == "" || subtle.ConstantTimeCompare([]byte(given), []byte(s.tok.instructor)) != 1 {
		s.writeError(w, r, errorf(http.StatusUnauthorized, "token", "not this server's instructor token (cclab serve prints it at start)"))
		return
	}
	setCookie(w, r, instructorCookie, s.tok.instrMAC, cookieMaxAge)
	http.Redirect(w, r, "/class", http.StatusSeeOther)
}

// mayChange lets the owner of something, or an instructor, change it; what
// names it in the refusal ("run 3f2a…").
func mayChange(r *http.Request, owner, what string) error {
	id := who(r)
	if id.instructor || (owner != "" && owner == id.owner) {
		return nil
	}
	return errorf(http.StatusForbidden, "id", "%s belongs to someone else: only its owner or an instructor may change it", what)
}

// needInstructor refuses a request that does not come from an instructor.
func needInstructor(r *http.Request) error {
	if who(r).instructor {
		return nil
	}
	return errorf(http.StatusUnauthorized, "", "only an instructor may do this: sign in with the instructor token (GET /instructor?token=…) or send it as Authorization: Bearer")
}

// ---- cross-site safety ----

// crossSite refuses state-changing requests a browser sends from another
// origin (Origin, or Sec-Fetch-Site when there is no Origin), unless the
// origin is allowed (--allow-origin, for a reverse proxy); and on /api it
// accepts only JSON bodies (the policy upload and the ns-3 import also take
// files), so that a form on another site cannot send one. Clients that send neither header
// (curl, scripts) are not browsers and pass.
func (s *Server) crossSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if !s.sameOrigin(r) {
			s.writeError(w, r, errorf(http.StatusForbidden, "", "cross-site request refused: %s %s from %s (state-changing requests must come from this server's own pages)",
				r.Method, r.URL.Path, originOf(r)))
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") && !acceptsBody(r) {
			s.writeError(w, r, errorf(http.StatusUnsupportedMediaType, "", "want Content-Type: application/json, got %q", r.Header.Get("Content-Type")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func originOf(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		return "origin " + o
	}
	return "a " + r.Header.Get("Sec-Fetch-Site") + " page"
}

// sameOrigin checks the request's Origin (its host must be the one the
// request was sent to, or an allowed origin), and without one its
// Sec-Fetch-Site.
func (s *Server) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		if o == "null" {
			return false // sandboxed frames, file: pages
		}
		for _, a := range s.cfg.AllowOrigins {
			if strings.EqualFold(o, a) {
				return true
			}
		}
		u, err := url.Parse(o)
		return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// acceptsBody reports whether an /api request's body is JSON (or nothing),
// a policy file on the upload route, or ns-3 files on the import route.
func acceptsBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.ContentLength == 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	if mt == "application/json" {
		return true
	}
	if r.URL.Path == "/api/import/ns3" {
		return mt == "multipart/form-data"
	}
	return r.URL.Path == "/api/policies" && (mt == "multipart/form-data" || mt == "application/octet-stream")
}

// securityHeaders: scripts from this server only, no framing, no MIME
// sniffing, no referrer to other sites.
func securityHeaders(next http.Handler) http.Handler {
	const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
		"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// ---- per-owner limits ----

// ClassLimits are the limits on each owner (an instructor is exempt); an
// instructor may change them while the server runs (PUT /api/class/limits).
// Zero or negative means no limit.
type ClassLimits struct {
	// ClientRuns: runs one owner may have queued, running or paused.
	ClientRuns int `json:"clientRuns"`
	// RunsPerMinute: run creations per owner per minute (a token bucket
	// holding RunsBurst).
	RunsPerMinute float64 `json:"runsPerMinute"`
	RunsBurst     int     `json:"runsBurst"`
	// WorkPerHour: simulated work per owner per hour, in data packets as
	// the run's cost estimate counts them (Σ ⌈size / mtu⌉).
	WorkPerHour float64 `json:"workPerHour"`
	// ViewersPerOwner: WebSocket streams one owner may have open.
	ViewersPerOwner int `json:"viewersPerOwner"`
	// TokensPerHour: owner tokens one IP address may be given per hour.
	TokensPerHour int `json:"tokensPerHour"`
}

// DefaultClassLimits suit a class of 40 on one server.
func DefaultClassLimits() ClassLimits {
	return ClassLimits{ClientRuns: 8, RunsPerMinute: 20, RunsBurst: 10, WorkPerHour: 4e8, ViewersPerOwner: 16, TokensPerHour: 200}
}

// limiters keeps each owner's buckets and open streams.
type limiters struct {
	mu      sync.Mutex
	lim     ClassLimits
	create  map[string]*rate.Limiter
	work    map[string]*rate.Limiter
	issued  map[string]*rate.Limiter // by IP address
	viewers map[string]int
}

func newLimiters(l ClassLimits) *limiters {
	return &limiters{lim: l, create: map[string]*rate.Limiter{}, work: map[string]*rate.Limiter{},
		issued: map[string]*rate.Limiter{}, viewers: map[string]int{}}
}

func (l *limiters) get() ClassLimits {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lim
}

// set changes the limits; every bucket starts full again.
func (l *limiters) set(c ClassLimits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lim = c
	clear(l.create)
	clear(l.work)
	clear(l.issued)
}

// bucket returns key's limiter in m, made on first use; a map that grows
// past 100,000 keys starts over (every bucket full: limits loosen for a
// moment, memory stays bounded).
func bucket(m map[string]*rate.Limiter, key string, r rate.Limit, burst int) *rate.Limiter {
	b := m[key]
	if b == nil {
		if len(m) >= 100_000 {
			clear(m)
		}
		b = rate.NewLimiter(r, burst)
		m[key] = b
	}
	return b
}

// issue takes one owner token from ip's hourly allowance.
func (l *limiters) issue(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.lim.TokensPerHour
	if n <= 0 {
		return true
	}
	return bucket(l.issued, ip, rate.Limit(float64(n)/3600), n).Allow()
}

// admitCreate takes one run creation from owner's bucket, before the run
// is compiled (so that a client hammering the route costs little), or says
// when to try again. undo gives the token back (a run refused later).
func (l *limiters) admitCreate(owner string) (undo func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.RunsPerMinute <= 0 {
		return func() {}, nil
	}
	now := time.Now()
	c := bucket(l.create, owner, rate.Limit(l.lim.RunsPerMinute/60), max(l.lim.RunsBurst, 1)).ReserveN(now, 1)
	if d := c.DelayFrom(now); d > 0 {
		c.CancelAt(now)
		return nil, retryError(limitError(http.StatusTooManyRequests, "runs-per-minute", "",
			"you have started runs faster than %g per minute, this server's limit (runs-per-minute); try again in %s",
			l.lim.RunsPerMinute, roundUp(d)), d)
	}
	return func() { c.Cancel() }, nil
}

// admitWork takes a compiled run's work from owner's hourly budget, or
// says which limit refuses it and when it would fit. undo gives it back.
func (l *limiters) admitWork(owner string, work float64) (undo func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.WorkPerHour <= 0 {
		return func() {}, nil
	}
	if work > l.lim.WorkPerHour {
		return nil, limitError(http.StatusUnprocessableEntity, "work-per-hour", "",
			"this run's %.3g data packets are more than one owner may simulate in an hour (work-per-hour: %.3g)", work, l.lim.WorkPerHour)
	}
	now := time.Now()
	k := bucket(l.work, owner, rate.Limit(l.lim.WorkPerHour/3600), int(l.lim.WorkPerHour)).ReserveN(now, int(math.Ceil(work)))
	if d := k.DelayFrom(now); d > 0 {
		k.CancelAt(now)
		return nil, retryError(limitError(http.StatusTooManyRequests, "work-per-hour", "",
			"this run's %.3g data packets would take you past %.3g simulated in the last hour, this server's limit (work-per-hour); try again in %s",
			work, l.lim.WorkPerHour, roundUp(d)), d)
	}
	return func() { k.Cancel() }, nil
}

// openViewer counts one more stream of owner's, or refuses it.
func (l *limiters) openViewer(owner string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.lim.ViewersPerOwner; n > 0 && l.viewers[owner] >= n {
		return retryError(limitError(http.StatusTooManyRequests, "viewers-per-owner", "",
			"you have %d live views open, this server's limit per user (viewers-per-owner); close one", n), 5*time.Second)
	}
	l.viewers[owner]++
	return nil
}

func (l *limiters) closeViewer(owner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.viewers[owner]--; l.viewers[owner] <= 0 {
		delete(l.viewers, owner)
	}
}

func roundUp(d time.Duration) time.Duration {
	if d < time.Second {
		return time.Second
	}
	return d.Round(time.Second)
}

// retryError sets when a refused request may be tried again (the
// Retry-After header of its 429).
func retryError(e *apiError, after time.Duration) *apiError {
	e.RetryAfter = int(math.Ceil(after.Seconds()))
	if e.RetryAfter < 1 {
		e.RetryAfter = 1
	}
	return e
}

// instructorMAC is what the instructor cookie holds.
func instructorMAC(key []byte, token string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("instructor\x00" + token))
	return hex.EncodeToString(h.Sum(nil))
}

func retryAfterHeader(e *apiError) string {
	if e.RetryAfter <= 0 {
		return "1"
	}
	return strconv.Itoa(e.RetryAfter)
}
