/* cu_main.h - the shared main() logic of the CUnit test programs.
 *
 * Runs one suite with the basic runner in verbose mode (so the "Run
 * Summary:" table prints for CI) and turns the outcome into an automake
 * test exit status: 0 all passed, 1 some assertion or test failed, 99 the
 * framework itself failed.  CU_basic_run_tests() returns a framework error
 * code, not a failure count, so the counts are read explicitly, and before
 * CU_cleanup_registry() resets them.  Also a string assertion that names
 * both strings in the failure report. */
#ifndef PLC_CU_MAIN_H
#define PLC_CU_MAIN_H

#include <stdio.h>
#include <string.h>
#include <CUnit/Basic.h>

/* Assert got == want as strings, reporting both and the caller's line (a
 * helper's own line would not say which case failed).  CUnit copies the
 * message, so a stack buffer is fine. */
static inline void plc_cu_str_eq(const char *got, const char *want,
                                 unsigned line, const char *file)
{
  char msg[320];
  int ok = got && want && strcmp(got, want) == 0;
  snprintf(msg, sizeof msg, "got \"%.140s\", want \"%.140s\"",
           got ? got : "(null)", want ? want : "(null)");
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, file, "",
                          CU_FALSE);
}

#define PLC_CU_STR_EQ(got, want) \
  plc_cu_str_eq((got), (want), __LINE__, __FILE__)

/* CU_ASSERT with a message of our own (e.g. the case in a table-driven
 * loop) instead of the condition's text. */
#define PLC_CU_ASSERT_MSG(cond, msg)                                         \
  CU_assertImplementation((cond) ? CU_TRUE : CU_FALSE, __LINE__, (msg),      \
                          __FILE__, "", CU_FALSE)

typedef struct plc_cu_test {
  const char *name;
  void (*fn)(void);
} plc_cu_test;

/* tests ends with an entry whose name is NULL. */
static inline int plc_cu_run(const char *suite_name, const plc_cu_test *tests)
{
  if (CU_initialize_registry() != CUE_SUCCESS)
    return 99;
  CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
  if (!suite)
    goto framework_error;
  for (const plc_cu_test *t = tests; t->name; t++)
    if (!CU_add_test(suite, t->name, t->fn))
      goto framework_error;
  CU_basic_set_mode(CU_BRM_VERBOSE);
  if (CU_basic_run_tests() != CUE_SUCCESS)
    goto framework_error;
  unsigned failures = CU_get_number_of_failures();
  unsigned failed_tests = CU_get_number_of_tests_failed();
  CU_cleanup_registry();
  printf("\n");
  return failures || failed_tests ? 1 : 0;

framework_error:
  fprintf(stderr, "CUnit error: %s\n", CU_get_error_msg());
  CU_cleanup_registry();
  return 99;
}

#endif
