package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3 document of every route (checked against the
// router in TestOpenAPIMatchesRoutes).
//
//go:embed openapi.json
var openAPI []byte

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
