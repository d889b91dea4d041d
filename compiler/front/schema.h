/* schema.h - the fields each kind of declaration has, with their types.
 *
 * plc's C core knows devices, links, clusters, trains and ops; what a model
 * has is up to the plan (models are free-form records), and framework
 * behaviour is written in templates.  This table is what lets the semantic
 * pass reject a misspelt field or a bandwidth given in FLOP/s. */
#ifndef PLC_SCHEMA_H
#define PLC_SCHEMA_H

#include "quantity.h"

typedef enum plc_ftype {
  PLC_FT_NUM,   /* number of dimension e[] */
  PLC_FT_BOOL,
  PLC_FT_STR,
  PLC_FT_ENUM,  /* one of enums[], written as a name or a string */
  PLC_FT_REF,   /* a declaration of kind ref */
  PLC_FT_DIMS,  /* list of parallel dimension names */
  PLC_FT_NUMS,  /* list of dimensionless numbers */
  PLC_FT_STRS,  /* list of strings */
  PLC_FT_OPS,   /* list of op references */
  PLC_FT_WORD   /* a bare name or a string expression (stream names); enums, if
                 * set, lists the words allowed */
} plc_ftype;

typedef struct plc_field {
  const char *name;
  plc_ftype type;
  int e[PLC_NDIM];          /* dimension, for PLC_FT_NUM */
  int ref;                  /* plc_decl_kind, for PLC_FT_REF */
  const char *const *enums; /* NULL-terminated, for PLC_FT_ENUM (and WORD) */
  int required;
  const char *doc;
  const char *dflt;         /* when absent: another field's name, or a number */
  int check;                /* plc_check: the range of a known value */
} plc_field;

/* Ranges of numeric fields, checked when the value is known. */
typedef enum plc_check {
  PLC_CHK_ANY,     /* no constraint */
  PLC_CHK_POS,     /* > 0 (a bandwidth, a FLOP rate) */
  PLC_CHK_NONNEG,  /* >= 0 (a latency, a pinned time, a size) */
  PLC_CHK_COUNT,   /* an integer >= 1 (a group size, a batch) */
  PLC_CHK_FRAC,    /* 0 < x <= 1, and above 1 only a warning (efficiency) */
  PLC_CHK_UNIT     /* 0 <= x <= 1 (a hidden fraction) */
} plc_check;

/* Schemas: declaration kinds use plc_decl_kind; these extra ones follow. */
enum {
  PLC_SCHEMA_OP = 100,      /* fields of an op */
  PLC_SCHEMA_RESULT = 101,  /* read-only results of a train (for asserts) */
  PLC_SCHEMA_LAYER = 102,   /* the `layer` context name in templates */
  PLC_SCHEMA_MEMORY = 103,  /* a template's `memory` section */
};

/* Field `name` of a schema, or NULL.  Models have no schema (free-form). */
const plc_field *plc_schema_field(int schema, const char *name);
/* The same for a name of hash `hash` (plc_name_hash; 0: not known). */
const plc_field *plc_schema_field_h(int schema, const char *name, unsigned hash);
/* The value of field f's default when it is a number (parsed once, in
 * base units, without its dimension f->e); NULL when it names another
 * field of the schema (or f is not one of the schema's). */
mpq_srcptr plc_schema_default_num(int schema, const plc_field *f);
/* Iterate over a schema's fields; NULL past the end. */
const plc_field *plc_schema_at(int schema, size_t i);
/* Does the kind have a fixed field list? */
int plc_schema_closed(int schema);

/* Parallel dimensions a collective can run over (tp, cp, dp, ep, pp, ...). */
int plc_schema_is_dim(const char *name);
/* Collective and compute op kinds (compute, all_reduce, ...). */
int plc_schema_is_opkind(const char *name);
const char *plc_schema_dims_list(void);
const char *plc_schema_opkinds_list(void);

/* The closest of `n` candidate names to `name` (edit distance <= 2), or NULL:
 * used for "did you mean" hints. */
const char *plc_schema_suggest(const char *name, const char *const *cands, size_t n);

#endif
