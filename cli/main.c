/* main.c - the plc command line: options, the pipeline, exit status.
 *
 * Exit status: 0 success, 1 the plan has errors (or a failed assertion),
 * 2 usage or I/O problems. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "deps.h"
#include "drive.h"
#include "eval.h"
#include "flow.h"
#include "import.h"
#include "load.h"
#include "lower.h"
#include "output.h"
#include "parse.h"
#include "report_json.h"
#include "report_md.h"
#include "search.h"
#include "sema.h"
#include "sim.h"
#include "svg.h"
#include "pipeline.h"
#include "timeline.h"
#include "step_report.h"
#include "trace.h"
#include "xalloc.h"

typedef enum plc_action { PLC_ACT_REPORT, PLC_ACT_CHECK, PLC_ACT_TOKENS, PLC_ACT_AST, PLC_ACT_IR,
                          PLC_ACT_STEP, PLC_ACT_COMPARE, PLC_ACT_PLAN, PLC_ACT_MERGE } plc_action;

typedef enum plc_format { PLC_FMT_TEXT, PLC_FMT_JSON, PLC_FMT_MD, PLC_FMT_CSV } plc_format;

typedef struct plc_cli {
  plc_action action;
  plc_format format;
  int exact, digits, ops;
  int whole_step;     /* --whole-step: the reports' whole-step section */
  const char **defines;
  size_t ndefines;
  const char **evals;
  size_t nevals;
  plc_ast **mains; /* the files named on the command line, parsed */
  int nmains;
  const char **dirs;    /* -I, for --compare's separate compilations */
  size_t ndirs;
  const char *out_path; /* -o FILE */
  FILE *out;            /* where results go */
  plc_deps_opts deps;   /* -M, -MD, -MF, -MT, -MP */
  int timeline, timeline_stage, timeline_width; /* --timeline[=STAGE]: stage -1 is the critical one */
  const char *trace, *svg;                      /* --trace=FILE, --svg=FILE */
  int status;      /* 2 after a usage or I/O error found while evaluating */
  int failed_asserts; /* errors that are false assertions: the output is still written */
  int keep_output;    /* exit status 1 for false assertions only: keep the output */
  int jobs;           /* --jobs N: threads of a search */
  int shard_k, shard_n; /* --shard K/N */
  int shown;          /* reports and searches printed so far */
} plc_cli;

static void plc_cli_usage(FILE *out)
{
  fputs("Usage: plc [OPTION]... FILE.plan...\n"
        "  or:  plc import hf CONFIG.json | plc import megatron ARGS...  (plc import --help)\n"
        "Compile and evaluate plan files describing the hardware, models and parallel\n"
        "layouts of LLM training: the communication, overlap, bubble and step time.\n"
        "\n"
        "  --report             evaluate each training run and print its report (default)\n"
        "  --ops                in reports, list every collective of the critical stage\n"
        "                       with its consumer, window, time and exposed part\n"
        "  --whole-step         in reports, also the step simulated as one graph (every\n"
        "                       stage, chunk and microbatch; see --emit=step)\n"
        "  --compare            evaluate the runs of every FILE (each file compiled on its\n"
        "                       own) and print them side by side, with differences\n"
        "  --format=text|json|md|csv\n"
        "                       reports as text tables (default), one JSON document\n"
        "                       (plc-json(5)), Markdown for reviews, or (searches only)\n"
        "                       CSV, one row per ranked candidate\n"
        "  --jobs=N             evaluate a search's candidates in N threads\n"
        "  --shard=K/N          evaluate only the K-th of N slices of each search and\n"
        "                       write the result as JSON, for --merge\n"
        "  --merge              FILEs are JSON outputs of --shard: print the ranking of\n"
        "                       all their slices together, as one run would\n"
        "  --timeline[=STAGE]   after each report, the pipeline of the whole step (a row\n"
        "                       per stage, its blocks), then an ASCII timeline of one\n"
        "                       microbatch on STAGE (default: the critical stage), one\n"
        "                       row per stream\n"
        "  --timeline-width=N   make it N columns wide (default $COLUMNS, else 100)\n"
        "  --trace=FILE         write the simulated timelines of every stage as Chrome\n"
        "                       trace-event JSON (ui.perfetto.dev)\n"
        "  --svg=FILE           draw one microbatch of every stage as an SVG picture\n"
        "  --check              parse, resolve and type-check only\n"
        "  --emit=tokens|ast|ir|step|plan\n"
        "                       print the tokens, the syntax tree, the lowered ops, or\n"
        "                       the whole step simulated as one graph (links shared,\n"
        "                       then dedicated; every schedule, chunk by chunk); plan:\n"
        "                       the best candidate of each search as a train to paste\n"
        "  -e, --eval=EXPR      print the value of EXPR (train results included) instead of\n"
        "                       the reports\n"
        "  -D NAME=EXPR         override a top-level let or a field (DECL.FIELD=EXPR)\n"
        "  -I DIR               add DIR to the import search path\n"
        "  --exact              print exact rationals instead of rounded decimals\n"
        "  --digits=N           significant digits of printed values (default 4)\n"
        "  -o FILE              write the output to FILE (atomically: on error no file is\n"
        "                       left and an old FILE stays)\n"
        "  -M, -MD, -MF FILE, -MT TARGET, -MP\n"
        "                       make dependency rules listing every file read, with gcc's\n"
        "                       meanings (-M writes the rule instead of the output)\n"
        "  -w                   suppress warnings\n"
        "  -Werror              treat warnings as errors\n"
        "  --help               show this help and exit\n"
        "  --version            show the version and exit\n"
        "\n"
        "A search (plc(5) SEARCH) prints its best candidates, ranked, and how many\n"
        "were skipped for each reason; progress goes to stderr when it is a terminal.\n"
        "The report of a training run gives the placement of each parallel dimension,\n"
        "every collective's time, overlap window and exposed part, the pipeline bubble,\n"
        "the step time and its parts, eta, MFU and the bottleneck.  A failed assert\n"
        "makes plc exit with status 1; the reports (and -o FILE) are still written.\n"
        "\n"
        "Imports are searched in the importing file's directory, the -I directories,\n"
        "$PLC_PATH (colon-separated) and the standard library.\n"
        "Exit status: 0 success, 1 errors in a plan, 2 usage or I/O errors.\n"
        "See plc(1), plc(5), plc-json(5) and plc-stdlib(7).\n", out);
}

static void plc_cli_push(const char ***list, size_t *n, const char *s)
{
  *list = plc_xrealloc(*list, (*n + 1) * sizeof **list);
  (*list)[(*n)++] = s;
}

enum { OPT_CHECK = 256, OPT_EMIT, OPT_EXACT, OPT_DIGITS, OPT_HELP, OPT_VERSION, OPT_REPORT,
       OPT_OPS, OPT_COMPARE, OPT_FORMAT, OPT_TIMELINE, OPT_TIMELINE_WIDTH, OPT_TRACE,
       OPT_SVG, OPT_JOBS, OPT_SHARD, OPT_MERGE, OPT_WHOLE_STEP };

static const struct option plc_cli_options[] = {
  {"check", no_argument, NULL, OPT_CHECK},
  {"report", no_argument, NULL, OPT_REPORT},
  {"ops", no_argument, NULL, OPT_OPS},
  {"whole-step", no_argument, NULL, OPT_WHOLE_STEP},
  {"compare", no_argument, NULL, OPT_COMPARE},
  {"timeline", optional_argument, NULL, OPT_TIMELINE},
  {"timeline-width", required_argument, NULL, OPT_TIMELINE_WIDTH},
  {"trace", required_argument, NULL, OPT_TRACE},
  {"svg", required_argument, NULL, OPT_SVG},
  {"jobs", required_argument, NULL, OPT_JOBS},
  {"shard", required_argument, NULL, OPT_SHARD},
  {"merge", no_argument, NULL, OPT_MERGE},
  {"emit", required_argument, NULL, OPT_EMIT},
  {"format", required_argument, NULL, OPT_FORMAT},
  {"eval", required_argument, NULL, 'e'},
  {"exact", no_argument, NULL, OPT_EXACT},
  {"digits", required_argument, NULL, OPT_DIGITS},
  {"help", no_argument, NULL, OPT_HELP},
  {"version", no_argument, NULL, OPT_VERSION},
  {NULL, 0, NULL, 0},
};

/* A whole number from lo to hi, or -1. */
static long plc_cli_number(const char *s, long lo, long hi)
{
  char *end;
  long n = strtol(s, &end, 10);
  return *s && !*end && n >= lo && n <= hi ? n : -1;
}

/* --timeline[=STAGE] and --timeline-width=N; returns 0, or 2 for a bad value. */
static int plc_cli_timeline(plc_cli *cli, int c, const char *arg)
{
  if (c == OPT_TIMELINE) {
    cli->timeline = 1;
    cli->timeline_stage = arg ? (int)plc_cli_number(arg, 0, 1000000) : -1;
    if (arg && cli->timeline_stage < 0) {
      fprintf(stderr, "plc: error: --timeline takes a pipeline stage number, not '%s'\n", arg);
      return 2;
    }
  } else {
    cli->timeline_width = (int)plc_cli_number(arg, 40, 1000);
    if (cli->timeline_width < 0) {
      fprintf(stderr, "plc: error: --timeline-width takes a number from 40 to 1000\n");
      return 2;
    }
  }
  return 0;
}

/* --jobs=N and --shard=K/N; returns 0, or 2 for a bad value. */
static int plc_cli_scale(plc_cli *cli, int c, const char *arg)
{
  if (c == OPT_JOBS) {
    cli->jobs = (int)plc_cli_number(arg, 1, 1024);
    if (cli->jobs > 0)
      return 0;
    fprintf(stderr, "plc: error: --jobs takes a number from 1 to 1024\n");
    return 2;
  }
  const char *slash = strchr(arg, '/');
  char k[32];
  if (slash && (size_t)(slash - arg) < sizeof k) {
    memcpy(k, arg, (size_t)(slash - arg));
    k[slash - arg] = '\0';
    cli->shard_k = (int)plc_cli_number(k, 1, 1000000);
    cli->shard_n = (int)plc_cli_number(slash + 1, 1, 1000000);
  }
  if (slash && cli->shard_k > 0 && cli->shard_n > 0 && cli->shard_k <= cli->shard_n)
    return 0;
  fprintf(stderr, "plc: error: --shard takes K/N with 1 <= K <= N, not '%s'\n", arg);
  return 2;
}

static int plc_cli_format(plc_cli *cli, const char *arg)
{
  static const char *const names[] = {"text", "json", "md", "csv"};
  for (int f = PLC_FMT_TEXT; f <= PLC_FMT_CSV; f++)
    if (!strcmp(arg, names[f])) {
      cli->format = (plc_format)f;
      return 0;
    }
  fprintf(stderr, "plc: error: --format takes text, json, md or csv, not '%s'\n", arg);
  return 2;
}

/* Take gcc's -M, -MD, -MP, -MF FILE and -MT TARGET out of argv (getopt
 * cannot read them); returns the new argc, or -1 after a usage error. */
static int plc_cli_deps_options(int argc, char **argv, plc_deps_opts *d)
{
  int n = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      while (i < argc)
        argv[n++] = argv[i++];
      break;
    }
    if (!strcmp(a, "-M") || !strcmp(a, "-MD") || !strcmp(a, "-MP")) {
      d->M |= a[2] == '\0';
      d->MD |= a[2] == 'D';
      d->MP |= a[2] == 'P';
    } else if (!strcmp(a, "-MF") || !strcmp(a, "-MT")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "plc: error: option '%s' needs an argument\n", a);
        return -1;
      }
      if (a[2] == 'F')
        d->MF = argv[++i];
      else
        d->MT = plc_xrealloc(d->MT, (size_t)(d->nMT + 1) * sizeof *d->MT),
        d->MT[d->nMT++] = argv[++i];
    } else {
      argv[n++] = argv[i];
    }
  }
  argv[n] = NULL;
  return n;
}

/* Parse the command line; returns -1 to go on, else an exit status. */
/* Options that take a value to check; returns -1 to go on, else 2. */
static int plc_cli_valued(plc_cli *cli, int c, const char *arg, plc_program *prog, plc_diag *d)
{
  static const struct { const char *name; plc_action action; } emits[] = {
    {"tokens", PLC_ACT_TOKENS}, {"ast", PLC_ACT_AST}, {"ir", PLC_ACT_IR}, {"step", PLC_ACT_STEP},
    {"plan", PLC_ACT_PLAN}};
  switch (c) {
  case OPT_EMIT:
    for (size_t i = 0; i < sizeof emits / sizeof emits[0]; i++)
      if (!strcmp(arg, emits[i].name))
        return cli->action = emits[i].action, -1;
    fprintf(stderr, "plc: error: --emit takes tokens, ast, ir, step or plan, not '%s'\n", arg);
    return 2;
  case 'D':
    if (!strchr(arg, '=') || arg[0] == '=') {
      fprintf(stderr, "plc: error: -D takes NAME=EXPR, not '%s'\n", arg);
      return 2;
    }
    plc_cli_push(&cli->defines, &cli->ndefines, arg);
    return -1;
  case 'I':
    plc_program_add_dir(prog, arg);
    plc_cli_push(&cli->dirs, &cli->ndirs, arg);
    return -1;
  case 'W':
    if (!strcmp(arg, "error"))
      d->werror = 1;
    else if (strcmp(arg, "all") != 0) {
      fprintf(stderr, "plc: error: unknown warning option '-W%s'\n", arg);
      return 2;
    }
    return -1;
  default: /* OPT_DIGITS */
    cli->digits = (int)plc_cli_number(arg, 1, 60);
    if (cli->digits > 0)
      return -1;
    fprintf(stderr, "plc: error: --digits takes a number from 1 to 60\n");
    return 2;
  }
}

/* One option; returns -1 to go on, else an exit status. */
static int plc_cli_option(plc_cli *cli, int c, char **argv, plc_program *prog, plc_diag *d)
{
  switch (c) {
  case OPT_CHECK: cli->action = PLC_ACT_CHECK; return -1;
  case OPT_REPORT: cli->action = PLC_ACT_REPORT; return -1;
  case OPT_COMPARE: cli->action = PLC_ACT_COMPARE; return -1;
  case OPT_OPS: cli->ops = 1; return -1;
  case OPT_WHOLE_STEP: cli->whole_step = 1; return -1;
  case OPT_EXACT: cli->exact = 1; return -1;
  case OPT_TRACE: cli->trace = optarg; return -1;
  case OPT_SVG: cli->svg = optarg; return -1;
  case 'e': plc_cli_push(&cli->evals, &cli->nevals, optarg); return -1;
  case 'o': cli->out_path = optarg; return -1;
  case 'w': d->no_warnings = 1; return -1;
  case OPT_TIMELINE: case OPT_TIMELINE_WIDTH: return plc_cli_timeline(cli, c, optarg) ? 2 : -1;
  case OPT_FORMAT: return plc_cli_format(cli, optarg) ? 2 : -1;
  case OPT_MERGE: cli->action = PLC_ACT_MERGE; return -1;
  case OPT_JOBS: case OPT_SHARD: return plc_cli_scale(cli, c, optarg) ? 2 : -1;
  case OPT_EMIT: case 'D': case 'I': case 'W': case OPT_DIGITS:
    return plc_cli_valued(cli, c, optarg, prog, d);
  case OPT_HELP: plc_cli_usage(stdout); return 0;
  case OPT_VERSION: printf("plc %s\n", PACKAGE_VERSION); return 0;
  case ':':
    fprintf(stderr, "plc: error: option '%s' needs an argument\n", argv[optind - 1]);
    break;
  default:
    if (optopt)
      fprintf(stderr, "plc: error: unrecognized option '-%c'\n", optopt);
    else
      fprintf(stderr, "plc: error: unrecognized option '%s'\n", argv[optind - 1]);
  }
  fputs("Try 'plc --help' for more information.\n", stderr);
  return 2;
}

/* Options that do not go together, and no input at all. */
static int plc_cli_consistent(const plc_cli *cli, int argc)
{
  const char *msg = NULL;
  if ((cli->timeline || cli->trace || cli->svg) && (cli->action != PLC_ACT_REPORT || cli->nevals))
    msg = "--timeline, --trace and --svg go with reports, not with --check, --emit or -e";
  else if (cli->timeline && cli->format != PLC_FMT_TEXT)
    msg = "--timeline draws into text reports, not with --format=json, md or csv";
  else if (cli->shard_n && (cli->action != PLC_ACT_REPORT || cli->nevals))
    msg = "--shard evaluates searches for --merge, not with --check, --emit, -e or --merge";
  else if (optind >= argc)
    msg = "no input files";
  if (!msg)
    return -1;
  fprintf(stderr, "plc: error: %s\nTry 'plc --help' for more information.\n", msg);
  return 2;
}

/* Parse the command line; returns -1 to go on, else an exit status. */
static int plc_cli_parse(int *argcp, char **argv, plc_cli *cli, plc_program *prog, plc_diag *d)
{
  int c, rc, argc = *argcp = plc_cli_deps_options(*argcp, argv, &cli->deps);
  if (argc < 0)
    return 2;
  opterr = 0; /* plc words its own usage errors */
  while ((c = getopt_long(argc, argv, ":D:I:W:e:o:w", plc_cli_options, NULL)) != -1)
    if ((rc = plc_cli_option(cli, c, argv, prog, d)) >= 0)
      return rc;
  return plc_cli_consistent(cli, argc);
}

/* --emit=tokens needs no imports and no checking: one file at a time. */
static int plc_cli_tokens(const plc_cli *cli, char **files, int n, plc_program *prog)
{
  for (int i = 0; i < n; i++) {
    size_t before = prog->nsources;
    if (plc_load_main(prog, files[i]) != 0)
      return 2;
    if (prog->nsources > before)
      plc_parse_dump_tokens(cli->out, prog->arena, prog->diag, prog->sources[before]);
  }
  return 0;
}

static void plc_cli_print_value(const plc_value *v, const plc_cli *cli)
{
  if (v->tag == PLC_V_NUM && v->known) {
    plc_quantity q;
    plc_q_init(&q);
    mpq_set(q.v, v->q);
    q.dim = v->dim;
    char *s = plc_q_format(&q, cli->digits, cli->exact);
    fprintf(cli->out, "%s\n", s);
    free(s);
    plc_q_clear(&q);
  } else if (v->tag == PLC_V_BOOL && v->known) {
    fprintf(cli->out, "%s\n", v->b ? "true" : "false");
  } else if (v->tag == PLC_V_STR) {
    fprintf(cli->out, "%s\n", v->s);
  } else if (v->tag == PLC_V_OBJ && v->obj->name) {
    fprintf(cli->out, "%s %s\n", v->obj->kind >= 0 && v->obj->kind < PLC_DECL_KIND_COUNT
           ? plc_decl_kind_name(v->obj->kind) : "section", v->obj->name);
  } else if (v->tag == PLC_V_LIST) {
    fprintf(cli->out, "<a list of %zu>\n", v->n);
  } else {
    char *d = plc_value_describe(v);
    fprintf(cli->out, "<%s>\n", d);
    free(d);
  }
}

/* -e EXPR: evaluate in the program's top-level scope after checking. */
static void plc_cli_evals(const plc_cli *cli, plc_sema *s, plc_program *prog)
{
  s->ev.abstract = 0;
  for (size_t i = 0; i < cli->nevals; i++) {
    plc_source *src = plc_source_new("<command line>", NULL, cli->evals[i],
                                     strlen(cli->evals[i]));
    prog->sources = plc_xrealloc(prog->sources, (prog->nsources + 1) * sizeof *prog->sources);
    prog->sources[prog->nsources++] = src;
    const plc_ast *e = plc_parse_expr(prog->arena, prog->diag, src, 0);
    if (!e)
      continue;
    plc_value *v = plc_eval_expr(&s->ev, e, s->ev.global);
    if ((v->tag == PLC_V_NUM || v->tag == PLC_V_BOOL) && !v->known)
      plc_error(prog->diag, &e->loc, "this value needs a training run evaluated; "
                "leave out --check");
    else if (v->tag != PLC_V_ERR)
      plc_cli_print_value(v, cli);
  }
}

/* One run's report in the chosen format; JSON gathers the runs in doc. */
static void plc_cli_report(const plc_cli *cli, plc_json_doc *doc, const plc_result *r,
                           const plc_report_opts *o)
{
  if (cli->format == PLC_FMT_JSON)
    plc_json_add_run(doc, r, o);
  else if (cli->format == PLC_FMT_MD)
    plc_md_report(cli->out, r, o);
  else
    plc_report_text(cli->out, r, o);
}

/* --timeline: the width from the option, else $COLUMNS, else 100. */
static void plc_cli_draw(plc_cli *cli, const plc_result *res, const plc_report_opts *o)
{
  int width = cli->timeline_width;
  const char *env = getenv("COLUMNS");
  if (width <= 0)
    width = env ? (int)plc_cli_number(env, 40, 1000) : -1;
  if (cli->timeline_stage >= res->run->nstages) {
    fprintf(stderr, "plc: error: --timeline=%d: train '%s' has %d pipeline stage%s, from 0\n",
            cli->timeline_stage, res->run->name, res->run->nstages,
            res->run->nstages == 1 ? "" : "s");
    cli->status = 2;
    return;
  }
  plc_pipeline_print(cli->out, res, width > 0 ? width : 100, o);
  plc_timeline_print(cli->out, res, cli->timeline_stage, width > 0 ? width : 100, o);
}

/* No errors but false assertions: the outputs are written all the same. */
static int plc_cli_only_asserts(const plc_cli *cli, const plc_program *prog)
{
  return prog->diag->errors == cli->failed_asserts;
}

/* Lower and analyse the trains of the files named on the command line:
 * print their reports (or the IR), then decide every assertion (but those
 * the semantic pass found false). */
/* --emit=step: the whole step simulated as one graph, links as the train
 * says (shared_links), then the other way for comparison (the engine's
 * first version; see plc(5)). */
static void plc_cli_step(plc_cli *cli, plc_diag *diag, const plc_ir_run *ir)
{
  for (int k = 0; k < 2; k++) {
    int share = k == 0 ? ir->shared_links : !ir->shared_links;
    plc_step st;
    char msg[256];
    plc_step_opts opts = {.share = share};
    int ok = plc_step_run(&st, ir, &opts, msg, sizeof msg);
    if (ok) {
      if (k == 1)
        fputs("\nfor comparison:\n", cli->out);
      plc_step_report(cli->out, &st, ir, share, cli->digits, cli->exact);
    } else {
      plc_error(diag, &ir->decl->loc, "train '%s': %s", ir->name, msg);
    }
    plc_step_free(&st);
    if (!ok)
      break;
  }
}

/* A search's result in the chosen output; JSON gathers them in doc. */
static void plc_cli_search_out(plc_cli *cli, plc_json_doc *doc, const plc_sresult *r,
                               const plc_report_opts *o)
{
  if (doc && cli->action != PLC_ACT_PLAN) {
    plc_json_add_search(doc, plc_search_json(r, o));
    cli->shown++;
    return;
  }
  if (cli->shown++ > 0)
    fputc('\n', cli->out);
  if (cli->action == PLC_ACT_PLAN)
    cli->status = plc_search_emit_plan(cli->out, r) ? 1 : cli->status;
  else if (cli->format == PLC_FMT_MD)
    plc_search_md(cli->out, r, o);
  else if (cli->format == PLC_FMT_CSV)
    plc_search_csv(cli->out, r, o);
  else
    plc_search_text(cli->out, r, o);
}

/* Evaluate a search (or this process's shard of it) and print it. */
static void plc_cli_search(plc_cli *cli, plc_drive *d, const plc_ast *decl, plc_json_doc *doc,
                           const plc_report_opts *o)
{
  plc_search_opts so = {cli->jobs > 0 ? cli->jobs : 1, cli->shard_n ? cli->shard_k : 1,
                        cli->shard_n ? cli->shard_n : 1, isatty(STDERR_FILENO), *o};
  plc_sresult *r = plc_search_run(d, decl, &so);
  if (!r)
    return;
  plc_cli_search_out(cli, doc, r, o);
  plc_sresult_free(r);
}

/* Outputs that only searches have: with none to print, say so. */
static void plc_cli_searches_only(plc_cli *cli)
{
  const char *what = cli->shard_n ? "--shard" : cli->action == PLC_ACT_PLAN ? "--emit=plan"
                     : cli->format == PLC_FMT_CSV ? "--format=csv" : NULL;
  if (!what || cli->shown)
    return;
  fprintf(stderr, "plc: error: %s prints searches, and the plan reports none\n", what);
  cli->status = 2;
}

static void plc_cli_evaluate(plc_cli *cli, plc_sema *s, plc_program *prog)
{
  plc_drive d;
  plc_report_opts o = {.digits = cli->digits, .exact = cli->exact, .ops = cli->ops,
                       .whole_step = cli->whole_step, .overrides = cli->defines,
                       .noverrides = (int)cli->ndefines};
  plc_drive_init(&d, s, prog, &o);
  d.sensitivity = cli->action == PLC_ACT_REPORT && !cli->nevals;
  /* the plan's trains share the instances they lower alike (a variant of
   * a train, one read by an assertion: llama3-405b-h100's three) */
  s->ev.lower_cache = plc_lcache_new("trains' ");
  d.skip_asserts = s->failed_asserts;
  d.nskip = s->nfailed_asserts;
  const plc_ast **trains;
  int n = plc_drive_select(&d, cli->mains, cli->nmains, &trains);
  plc_json_doc *doc = (cli->format == PLC_FMT_JSON || cli->shard_n) &&
                      cli->action == PLC_ACT_REPORT && !cli->nevals
    ? plc_json_new(PACKAGE_VERSION, cli->defines, cli->ndefines) : NULL;
  /* searches print alone with --shard, --emit=plan and --format=csv */
  int searches_only = cli->shard_n || cli->action == PLC_ACT_PLAN || cli->format == PLC_FMT_CSV;
  plc_trace *trace = cli->trace ? plc_trace_open(cli->trace) : NULL;
  if (cli->trace && !trace)
    cli->status = 2;
  plc_svg *svg = cli->svg ? plc_svg_new(&o) : NULL;
  for (int i = 0; i < n && !cli->nevals; i++) {
    if (trains[i] && trains[i]->op == PLC_DECL_SEARCH) {
      if (cli->action == PLC_ACT_REPORT || cli->action == PLC_ACT_PLAN)
        plc_cli_search(cli, &d, trains[i], doc, &o);
      continue;
    }
    if (searches_only)
      continue;
    plc_drive_run *r = trains[i] ? plc_drive_train(&d, trains[i]) : NULL;
    if (!r)
      continue;
    if (cli->shown++ > 0 && !doc)
      fputc('\n', cli->out);
    if (cli->action == PLC_ACT_IR)
      plc_ir_dump(cli->out, r->ir);
    else if (cli->action == PLC_ACT_STEP)
      plc_cli_step(cli, prog->diag, r->ir);
    else
      plc_cli_report(cli, doc, &r->res, &o);
    if (cli->timeline)
      plc_cli_draw(cli, &r->res, &o);
    if (trace && plc_trace_add(trace, &r->res) != 0)
      cli->status = 2;
    if (svg)
      plc_svg_add(svg, &r->res);
  }
  free(trains);
  if (doc)
    plc_json_finish(doc, cli->out);
  if (!cli->nevals && plc_cli_only_asserts(cli, prog))
    plc_cli_searches_only(cli);
  int ok = plc_cli_only_asserts(cli, prog);
  if (trace && ok && !cli->status && plc_trace_finish(trace) != 0)
    cli->status = 2;
  plc_trace_free(trace);
  if (svg && ok && !cli->status && plc_svg_save(svg, cli->svg) != 0)
    cli->status = 2;
  plc_svg_free(svg);
  if (ok)
    plc_cli_evals(cli, s, prog);
  if (cli->action == PLC_ACT_REPORT && plc_cli_only_asserts(cli, prog)) {
    plc_drive_asserts(&d);
    cli->failed_asserts += d.failed_asserts;
  }
  plc_drive_free(&d);
  plc_lcache_free(s->ev.lower_cache);
  s->ev.lower_cache = NULL;
}

/* One file of --compare: compiled and evaluated on its own, so two
 * versions of one plan may define the same names. */
typedef struct plc_cmp_unit {
  plc_diag diag;
  plc_arena *arena;
  plc_program prog;
  plc_sema sema;
  plc_drive drive;
  int ok;
  int failed_asserts;
} plc_cmp_unit;

/* Compile and evaluate one file of --compare, adding its runs to runs and
 * labels; each file has its own diagnostics, with the command line's -w
 * and -Werror. */
static void plc_cli_compare_unit(plc_cli *cli, const plc_diag *main_diag, plc_cmp_unit *u,
                                 const char *file, const plc_result ***runs,
                                 const char ***labels, int *n)
{
  plc_diag_init(&u->diag, stderr);
  u->diag.werror = main_diag->werror;
  u->diag.no_warnings = main_diag->no_warnings;
  u->arena = plc_arena_new();
  plc_program_init(&u->prog, u->arena, &u->diag);
  for (size_t i = 0; i < cli->ndirs; i++)
    plc_program_add_dir(&u->prog, cli->dirs[i]);
  plc_program_add_default_dirs(&u->prog);
  if (plc_load_main(&u->prog, file) != 0 || u->diag.errors)
    return;
  plc_sema_check(&u->sema, &u->prog, cli->defines, cli->ndefines);
  if (u->diag.errors != (int)u->sema.nfailed_asserts)
    return;
  plc_report_opts o = {.digits = cli->digits, .exact = cli->exact, .overrides = cli->defines,
                       .noverrides = (int)cli->ndefines};
  plc_drive_init(&u->drive, &u->sema, &u->prog, &o);
  u->drive.sensitivity = 0; /* --compare prints no sensitivity rows */
  u->drive.skip_asserts = u->sema.failed_asserts;
  u->drive.nskip = u->sema.nfailed_asserts;
  u->ok = 1;
  plc_ast *main_file = u->prog.files[u->prog.nfiles - 1];
  const plc_ast **trains;
  int k = plc_drive_select(&u->drive, &main_file, 1, &trains);
  for (int i = 0; i < k; i++) {
    if (trains[i] && trains[i]->op == PLC_DECL_SEARCH)
      continue; /* --compare compares runs */
    plc_drive_run *r = trains[i] ? plc_drive_train(&u->drive, trains[i]) : NULL;
    if (!r)
      continue;
    *runs = plc_xrealloc(*runs, (size_t)(*n + 1) * sizeof **runs);
    *labels = plc_xrealloc(*labels, (size_t)(*n + 1) * sizeof **labels);
    (*runs)[*n] = &r->res;
    (*labels)[(*n)++] = trains[i]->name;
  }
  free(trains);
  if (u->diag.errors == (int)u->sema.nfailed_asserts)
    plc_drive_asserts(&u->drive);
  u->failed_asserts = (int)u->sema.nfailed_asserts + u->drive.failed_asserts;
}

/* --compare: the comparison is printed when the files have no errors but
 * false assertions (exit status 1 then, as for reports). */
static int plc_cli_compare(plc_cli *cli, const plc_diag *main_diag, char **files, int n)
{
  plc_cmp_unit *units = plc_xcalloc((size_t)n, sizeof *units);
  const plc_result **runs = NULL;
  const char **labels = NULL;
  int nruns = 0, errors = 0, asserts = 0;
  for (int i = 0; i < n; i++) {
    plc_cli_compare_unit(cli, main_diag, &units[i], files[i], &runs, &labels, &nruns);
    errors += units[i].diag.errors;
    asserts += units[i].failed_asserts;
  }
  cli->keep_output = errors == asserts;
  errors -= asserts;
  if (!errors && nruns < 2)
    fprintf(stderr, "plc: error: --compare needs two runs or more (files or trains)\n");
  plc_report_opts o = {.digits = cli->digits, .exact = cli->exact, .overrides = cli->defines,
                       .noverrides = (int)cli->ndefines};
  if (!errors && nruns >= 2)
    plc_compare_text(cli->out, runs, labels, nruns, &o);
  for (int i = 0; i < n; i++) {
    if (units[i].ok)
      plc_drive_free(&units[i].drive);
    plc_program_free(&units[i].prog);
    plc_arena_free(units[i].arena);
  }
  free(units);
  free(runs);
  free(labels);
  return errors ? 1 : nruns < 2 ? 2 : asserts ? 1 : 0;
}

/* May shard b be merged into a (the same search, another slice)? */
static int plc_cli_merge_fits(const plc_sresult *a, const plc_sresult *b)
{
  int same = a->space == b->space && a->shard_n == b->shard_n && a->top == b->top &&
             a->nvary == b->nvary && a->maximize == b->maximize &&
             !strcmp(a->objective, b->objective) && !strcmp(a->train, b->train);
  for (int i = 0; same && i < a->nvary; i++)
    same = !strcmp(a->vary[i], b->vary[i]);
  return same;
}

/* Merge the shards of one search (all[i] and those after it of the same
 * name) into all[i]; returns 0, or 2 with a message. */
static int plc_cli_merge_one(plc_sresult **all, int n, int i)
{
  plc_sresult *a = all[i];
  char *seen = plc_xcalloc((size_t)a->shard_n + 1, 1);
  int have = 0, rc = 0;
  seen[a->shard_k] = 1, have++;
  for (int j = i + 1; j < n && !rc; j++) {
    if (!all[j] || strcmp(all[j]->name, a->name))
      continue;
    if (!plc_cli_merge_fits(a, all[j])) {
      fprintf(stderr, "plc: error: --merge: the outputs of search '%s' are of different "
              "searches (space, shards, objective or varied fields differ)\n", a->name);
      rc = 2;
    } else if (all[j]->shard_k < 1 || all[j]->shard_k > a->shard_n || seen[all[j]->shard_k]) {
      fprintf(stderr, "plc: error: --merge: shard %d of %d of search '%s' is given twice\n",
              all[j]->shard_k, a->shard_n, a->name);
      rc = 2;
    } else {
      seen[all[j]->shard_k] = 1, have++;
      plc_sresult_merge(a, all[j]); /* frees all[j] */
      all[j] = NULL;
    }
    plc_sresult_free(all[j]);
    all[j] = NULL;
  }
  if (!rc && have != a->shard_n) {
    fprintf(stderr, "plc: error: --merge: search '%s' has %d of its %d shards\n", a->name, have,
            a->shard_n);
    rc = 2;
  }
  free(seen);
  a->shard_k = a->shard_n = 1;
  plc_sresult_sort_reasons(a);
  return rc;
}

/* plc --merge SHARD.json...: every search of the shard outputs, merged
 * and printed as one run prints it. */
static int plc_cli_merge(plc_cli *cli, char **files, int n)
{
  plc_sresult **all = NULL;
  int nall = 0, rc = 0;
  char err[512];
  plc_json_init();
  for (int f = 0; f < n && !rc; f++) {
    plc_sresult **got;
    int k = plc_search_read_json(files[f], &got, err, sizeof err);
    if (k < 0) {
      fprintf(stderr, "plc: error: --merge: %s\n", err);
      rc = 2;
      break;
    }
    all = plc_xrealloc(all, (size_t)(nall + k) * sizeof *all);
    memcpy(all + nall, got, (size_t)k * sizeof *got);
    nall += k;
    free(got);
  }
  plc_report_opts o = {.digits = cli->digits, .exact = cli->exact, .overrides = cli->defines,
                       .noverrides = (int)cli->ndefines};
  plc_json_doc *doc = !rc && cli->format == PLC_FMT_JSON && cli->action != PLC_ACT_PLAN
    ? plc_json_new(PACKAGE_VERSION, cli->defines, cli->ndefines) : NULL;
  for (int i = 0; i < nall && !rc; i++)
    if (all[i] && !(rc = plc_cli_merge_one(all, nall, i)))
      plc_cli_search_out(cli, doc, all[i], &o);
  if (doc)
    plc_json_finish(doc, cli->out);
  for (int i = 0; i < nall; i++)
    plc_sresult_free(all[i]);
  free(all);
  return rc ? rc : cli->status;
}

static int plc_cli_run(plc_cli *cli, char **files, int n, plc_program *prog)
{
  if (cli->action == PLC_ACT_MERGE)
    return plc_cli_merge(cli, files, n);
  if (cli->action == PLC_ACT_COMPARE)
    return plc_cli_compare(cli, prog->diag, files, n);
  if (cli->action == PLC_ACT_TOKENS)
    return plc_cli_tokens(cli, files, n, prog);
  cli->mains = plc_xcalloc((size_t)n + 1, sizeof *cli->mains);
  for (int i = 0; i < n; i++) {
    size_t before = prog->nfiles;
    if (plc_load_main(prog, files[i]) != 0)
      return 2;
    if (prog->nfiles > before)
      cli->mains[cli->nmains++] = prog->files[prog->nfiles - 1];
  }
  if (cli->deps.M) /* the rule instead of the output */
    return prog->diag->errors ? 1
           : plc_deps_write(&cli->deps, prog, files[0], cli->out_path) ? 2 : 0;
  if (cli->action == PLC_ACT_AST) {
    for (size_t i = 0; i < prog->nfiles; i++)
      plc_ast_dump(cli->out, prog->files[i], 0);
    return prog->diag->errors ? 1 : 0;
  }
  if (prog->diag->errors) /* syntax errors: checking the rest only cascades */
    return 1;
  plc_sema s;
  plc_sema_check(&s, prog, cli->defines, cli->ndefines);
  cli->failed_asserts = (int)s.nfailed_asserts;
  if (plc_cli_only_asserts(cli, prog) && cli->action == PLC_ACT_CHECK)
    plc_cli_evals(cli, &s, prog);
  else if (plc_cli_only_asserts(cli, prog))
    plc_cli_evaluate(cli, &s, prog);
  if (cli->status)
    return cli->status;
  if (!plc_cli_only_asserts(cli, prog))
    return 1;
  /* the plan is correct: its outputs are written, also when assertions fail */
  if (cli->deps.MD && plc_deps_write(&cli->deps, prog, files[0], cli->out_path))
    return 2;
  cli->keep_output = 1;
  return prog->diag->errors ? 1 : 0;
}

int main(int argc, char **argv)
{
  if (argc >= 2 && !strcmp(argv[1], "import")) /* plc import hf|megatron ... */
    return plc_import_main(argc - 1, argv + 1);
  plc_xalloc_keep_heap();
  plc_diag diag;
  plc_diag_init(&diag, stderr);
  plc_arena *arena = plc_arena_new();
  plc_program prog;
  plc_program_init(&prog, arena, &diag);
  plc_cli cli = {.action = PLC_ACT_REPORT, .digits = 4};
  plc_json_init(); /* before any thread: jansson's allocator is global */
  const char *nf = getenv("PLC_SIM_NO_FAST"); /* tests: the rational interpreter only */
  plc_sim_no_fast = nf && *nf && strcmp(nf, "0");
  plc_flow_no_fast = plc_sim_no_fast; /* and every flow on GMP rationals */
  const char *nm = getenv("PLC_EVAL_NO_CALL_MEMO"); /* tests: every call evaluated */
  plc_eval_call_memo = !(nm && *nm && strcmp(nm, "0"));
  int rc = plc_cli_parse(&argc, argv, &cli, &prog, &diag);
  plc_output out;
  if (rc < 0 && plc_output_open(&out, cli.deps.M ? NULL : cli.out_path) != 0)
    rc = 2;
  if (rc < 0) {
    cli.out = out.f;
    plc_program_add_default_dirs(&prog);
    prog.stdin_name = "<stdin>";
    rc = plc_cli_run(&cli, argv + optind, argc - optind, &prog);
    int keep = rc == 0 || (rc == 1 && cli.keep_output);
    if (keep && plc_output_commit(&out) != 0)
      rc = 2;
    else if (!keep)
      plc_output_abort(&out); /* no half-written file; the old one stays */
  } else if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) { /* --help, --version */
    fprintf(stderr, "plc: error: writing standard output: %s\n", strerror(errno));
    rc = 2;
  }
  plc_program_free(&prog);
  plc_arena_free(arena);
  free(cli.defines);
  free(cli.evals);
  free(cli.mains);
  free(cli.deps.MT);
  free(cli.dirs);
  return rc;
}
