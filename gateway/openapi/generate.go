package openapi

// openapi.json is the document of every route (written by TestSpecFileIsCurrent from the
// route sets' Docs); client/ is the Go client oapi-codegen generates from it.
//go:generate go test -run TestSpecFileIsCurrent -update .
//go:generate go tool oapi-codegen -config client/oapi-codegen.yaml openapi.json
