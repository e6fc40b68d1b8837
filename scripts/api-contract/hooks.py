"""Schemathesis hooks for rave's API contract run (scripts/api-contract.sh).

A pagination cursor is opaque and signed: only a `next_cursor` the server
issued for the same query is valid, which no JSON Schema can state. A
generated cursor that the document's pattern allows is therefore refused
(400, `detail` naming the cursor), and that refusal alone is not a failure
of the contract. The handlers check every other parameter before the
cursor, so a refusal naming the cursor means the rest was accepted.

A purchase proof is a JWT signed with the shop's secret: a generated one
never verifies (400, `detail` naming purchase_proof), and no schema can
state a signature. Only refusals of requests the schema allows are filtered
here, so a refusal naming purchase_proof is the proof's alone.

Likewise a webhook endpoint's URL is checked after DNS resolution (only
public addresses may receive deliveries): a generated host name that does
not resolve, or resolves to a private address, is refused (400, `detail`
naming the url), which no schema can state either.

An import's body is a CSV file whose header must hold the columns its
mapping names (400, `detail` starting with `body:`), and its repeated
`map` and `product` parameters must name known fields and valid product
ids (`map:`, `product:`): a document types them as strings, as a CSV is
text, and no schema states what a header must hold.

A GTIN ends in a GS1 check digit computed from the others: a generated
GTIN of the right length is refused when its last digit is not that one
(400, `detail` naming `gtins`), which a pattern cannot state.

A comment's sub-rating answers, posted or edited, must be ones its
product's record asks for (400, `detail` naming `attributes` or
`attributes.<name>`): which
attributes a product declares is the shop's data, not the document's. A
product's `group` must not be the product itself, a variant of another
group, or a group already holding 50 variants (400, `detail` naming
`group`): that depends on the path and on the other records. And a product record's
declarations must name each attribute and each choice once (400, `detail`
starting with `attributes:`), which JSON Schema cannot state of a list of
objects.

A photo posted with a comment (a `photo` part of a multipart post, on the
API or the review form) must be a JPEG, PNG or WebP image by its bytes, and
each file is a different one: the document can only say "binary", so a
generated file is refused (400, `detail` naming the part: `photo[1]: …`).
"""

import schemathesis

SCHEMA_VALID_REQUEST_REJECTED = "ST202"


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    if failure.code != SCHEMA_VALID_REQUEST_REJECTED or response.status_code != 400:
        return True
    try:
        detail = response.json().get("detail", "")
    except ValueError:
        return True
    if detail.startswith("cursor:") or detail.startswith("purchase_proof:"):
        return False
    if case.operation.path == "/v1/admin/imports" and detail.startswith(
        ("body:", "map:", "product:")
    ):
        return False
    if case.operation.path == "/v1/products/{product_id}" and detail.startswith(
        ("gtins:", "attributes:", "group:")
    ):
        return False
    if case.operation.path == "/v1/products/{product_id}/comments" and detail.startswith(
        ("attributes:", "attributes.", "photo[")
    ):
        return False
    if case.operation.path == "/v1/comments/{id}" and detail.startswith(
        ("attributes:", "attributes.")
    ):
        return False
    return not (case.operation.path == "/v1/admin/webhooks" and detail.startswith("url:"))
