package products

import "svc/payments"

// Commerce is the Family of the refusals of products, invoices and checkout links: they match
// by code alone, so errors.Is(err, ErrNotFound) holds for any not-found message of these
// domains, and a refusal built with its own sentence is still its sentinel.
const Commerce = "commerce"

// ErrNotFound: no product with that id for this tenant (another tenant's is not found).
var ErrNotFound = &payments.Error{Code: "NOT_FOUND", Message: "product not found", Family: Commerce}

// ErrInactive: the product is inactive or archived and cannot be used in new invoices or links.
var ErrInactive = &payments.Error{Code: "PRODUCT_INACTIVE", Message: "product is not active", Family: Commerce}

// ErrOutOfStock: not enough stock left for the quantity.
var ErrOutOfStock = &payments.Error{Code: "OUT_OF_STOCK", Message: "product is out of stock", Family: Commerce}
