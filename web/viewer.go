package web

import "context"

// Viewer is who a page is rendered for: the header links to the class
// view only for an instructor.
type Viewer struct {
	Instructor bool
}

type viewerKey struct{}

// WithViewer puts the viewer in a rendering context.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// viewerOf is the viewer a page is rendered for (nobody in particular
// without one).
func viewerOf(ctx context.Context) Viewer {
	v, _ := ctx.Value(viewerKey{}).(Viewer)
	return v
}
