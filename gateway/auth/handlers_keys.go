package auth

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/identity"
)

type keyJSON struct {
	ID          uuid.UUID       `json:"id"`
	Name        string          `json:"name"`
	KeyPrefix   string          `json:"key_prefix"`
	Environment api.Environment `json:"environment"`
	IsActive    bool            `json:"is_active"`
	Scopes      []string        `json:"scopes"`
	LastUsedAt  *Time           `json:"last_used_at"`
	CreatedAt   Time            `json:"created_at"`
	Key         string          `json:"key,omitempty"` // creation answer only
}

func toKeyJSON(k identity.APIKey) keyJSON {
	return keyJSON{ID: k.ID, Name: k.Name, KeyPrefix: k.KeyPrefix, Environment: api.Environment(k.Environment), IsActive: k.IsActive,
		Scopes: k.Scopes.Names(), LastUsedAt: ptrTime(k.LastUsedAt), CreatedAt: Time(k.CreatedAt)}
}

func (s *Service) handleCreateKey(ctx *fasthttp.RequestCtx) {
	var in struct {
		Name        string   `json:"name"`
		Environment string   `json:"environment"`
		Scopes      []string `json:"scopes"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		api.Fail(ctx, err)
		return
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Environment == "" {
		in.Environment = string(api.Sandbox)
	}
	var v api.Validator
	v.Length("name", in.Name, 1, 100)
	v.OneOf("environment", in.Environment, string(api.Sandbox), string(api.Live))
	scopes := identity.AllScopes
	if in.Scopes != nil {
		sc, bad, ok := identity.ParseScopes(in.Scopes)
		switch {
		case !ok:
			v.Add("scopes", "unknown scope "+strconv.Quote(bad)+"; use "+strings.Join(identity.ScopeNames(), ", "))
		case sc == 0:
			v.Add("scopes", "must name at least one scope (omit the field for all of them)")
		}
		scopes = sc
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	p, _ := api.PrincipalOf(ctx)
	k, err := s.id.CreateAPIKey(api.Ctx(ctx), caller(p), in.Name, identity.Environment(in.Environment), scopes)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := toKeyJSON(k.APIKey)
	out.Key = k.Key
	ctx.Response.Header.Set("Cache-Control", "no-store")
	api.Created(ctx, out)
}

func (s *Service) handleListKeys(ctx *fasthttp.RequestCtx) {
	page, err := api.Paging(ctx, "limit", 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	env := string(ctx.QueryArgs().Peek("environment"))
	if env != "" && env != string(api.Sandbox) && env != string(api.Live) {
		api.Fail(ctx, api.Invalid("environment", "must be sandbox or live"))
		return
	}
	p, _ := api.PrincipalOf(ctx)
	keys, total, err := s.id.ListAPIKeys(api.Ctx(ctx), caller(p), identity.Environment(env), identity.Page{Limit: page.Limit, Offset: page.Offset()})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = toKeyJSON(k)
	}
	meta := page.Meta(total)
	api.Array(ctx, out, &meta)
}

func (s *Service) handleRevokeKey(ctx *fasthttp.RequestCtx) {
	id, ok := api.PathUUID(ctx, "id", identity.ErrNotFound)
	if !ok {
		return
	}
	p, _ := api.PrincipalOf(ctx)
	k, err := s.id.RevokeAPIKey(api.Ctx(ctx), caller(p), id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Message(ctx, toKeyJSON(k), "API key revoked")
}

func (s *Service) handleDeleteKey(ctx *fasthttp.RequestCtx) {
	id, ok := api.PathUUID(ctx, "id", identity.ErrNotFound)
	if !ok {
		return
	}
	p, _ := api.PrincipalOf(ctx)
	if err := s.id.DeleteAPIKey(api.Ctx(ctx), caller(p), id); err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Message(ctx, map[string]any{"id": id, "deleted": true}, "API key deleted")
}
