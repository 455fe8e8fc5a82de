/* fuzz_hints.c: the readers of dpkg-query -S's output (whose lines hold a path taken from a
 * trace) and of apt-cache policy's in report/hints.c.
 *
 * The input's first line is the path (or package) asked about, the rest the tool's output.
 * Checked: a package found is a Debian package name (lowercase letters, digits, '+', '.', '-',
 * shorter than REP_PACKAGE_MAX), and the output holds the path and the package; a package apt
 * knows is in the output with a candidate. */
#include "fuzz_input.h"

#include "report/hints.h"

static int debian_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= REP_PACKAGE_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		      s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	char pkg[REP_PACKAGE_MAX];

	if (!nl)
		return 0;
	size_t plen = (size_t)(nl - (const char *)data);
	char *path = malloc(plen + 1);
	FUZZ_CHECK(path != NULL);
	memcpy(path, data, plen);
	path[plen] = '\0';
	if (strlen(path) == plen) { /* a path holds no NUL */
		const char *out = nl + 1;
		size_t len = size - plen - 1;
		/* a copy of its exact size, so that a read past it is caught */
		char *copy = malloc(len ? len : 1);
		FUZZ_CHECK(copy != NULL);
		memcpy(copy, out, len);
		if (rep_dpkg_owner_parse(copy, len, path, pkg)) {
			FUZZ_CHECK(debian_name(pkg));
			FUZZ_CHECK(plen > 0 && memmem(copy, len, path, plen) != NULL);
			FUZZ_CHECK(memmem(copy, len, pkg, strlen(pkg)) != NULL);
		}
		if (rep_apt_policy_knows(copy, len, path)) {
			FUZZ_CHECK(plen > 0 && memmem(copy, len, path, plen) != NULL);
			FUZZ_CHECK(memmem(copy, len, "  Candidate: ", 13) != NULL);
		}
		free(copy);
	}
	free(path);
	return 0;
}
