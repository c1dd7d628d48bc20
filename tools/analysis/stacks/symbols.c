/* symbols.c — file offset -> function name for the native frames of recorded
 * stacks.  Reads only the ELF header, program headers, section headers and
 * one symbol table with its string table (pread, no mmap: a file that shrinks
 * under us gives a short read, not SIGBUS).  Every offset and count from the
 * file is bounded before use; a file that fails any check gets no names. */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/stacks/symbols.h"
#include "common/util.h"

#define MAX_PHDRS 4096u
#define MAX_SHDRS 65536u
#define MAX_SYMTAB_BYTES (512u << 20) /* a symbol or string table larger than this is not read */

struct sym { uint64_t addr, size; uint32_t name; uint8_t global; };
struct load { uint64_t off, filesz, vaddr; };

struct symfile {
	int ok;
	struct load *loads; size_t nloads;
	struct sym *syms; size_t nsyms;
	char *strtab;
	char **demangled;   /* per symbol, filled on first lookup */
};

struct symcache {
	strmap idx;         /* path -> index in files */
	struct symfile **files; size_t n, cap;
};

struct symcache *symcache_new(void)
{
	struct symcache *c = xcalloc(1, sizeof(*c));
	strmap_init(&c->idx);
	return c;
}

static void symfile_free(struct symfile *f)
{
	if (!f) return;
	for (size_t i = 0; f->demangled && i < f->nsyms; i++) free(f->demangled[i]);
	free(f->demangled); free(f->syms); free(f->strtab); free(f->loads);
	free(f);
}

void symcache_free(struct symcache *c)
{
	if (!c) return;
	for (size_t i = 0; i < c->n; i++) symfile_free(c->files[i]);
	free(c->files);
	strmap_free(&c->idx);
	free(c);
}

/* Reads exactly n bytes at off, or fails (short file, I/O error). */
static int read_at(int fd, void *buf, uint64_t n, uint64_t off)
{
	uint64_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r <= 0) return -1;
		got += (uint64_t)r;
	}
	return 0;
}

/* [off, off+len) inside a file of fsize bytes, without overflow */
static int in_file(uint64_t off, uint64_t len, uint64_t fsize)
{
	return off <= fsize && len <= fsize - off;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
	/* aliases: a global name before a local one, then the one with a size */
	if (x->global != y->global) return x->global ? -1 : 1;
	if ((x->size != 0) != (y->size != 0)) return x->size ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Loads the function symbols of one table (SHT_SYMTAB or SHT_DYNSYM). */
static int load_symtab(struct symfile *f, int fd, uint64_t fsize, const Elf64_Shdr *sh, size_t shnum,
		       uint32_t type)
{
	size_t s;
	for (s = 0; s < shnum && sh[s].sh_type != type; s++) ;
	if (s == shnum) return -1;
	const Elf64_Shdr *st = &sh[s];
	if (st->sh_entsize != sizeof(Elf64_Sym) || st->sh_link >= shnum || sh[st->sh_link].sh_type != SHT_STRTAB)
		return -1;
	const Elf64_Shdr *str = &sh[st->sh_link];
	if (st->sh_size > MAX_SYMTAB_BYTES || str->sh_size > MAX_SYMTAB_BYTES || str->sh_size == 0 ||
	    !in_file(st->sh_offset, st->sh_size, fsize) || !in_file(str->sh_offset, str->sh_size, fsize))
		return -1;
	size_t nraw = st->sh_size / sizeof(Elf64_Sym);
	Elf64_Sym *raw = xmalloc(nraw ? nraw * sizeof(Elf64_Sym) : 1);
	char *strtab = xmalloc(str->sh_size + 1);
	if (read_at(fd, raw, nraw * sizeof(Elf64_Sym), st->sh_offset) ||
	    read_at(fd, strtab, str->sh_size, str->sh_offset)) {
		free(raw); free(strtab);
		return -1;
	}
	strtab[str->sh_size] = 0; /* a name running off the end stops here */
	struct sym *syms = xmalloc(nraw ? nraw * sizeof(struct sym) : 1);
	size_t n = 0;
	for (size_t i = 0; i < nraw; i++) {
		unsigned t = ELF64_ST_TYPE(raw[i].st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || raw[i].st_shndx == SHN_UNDEF || !raw[i].st_value ||
		    raw[i].st_name == 0 || raw[i].st_name >= str->sh_size || !strtab[raw[i].st_name])
			continue;   /* ... or a damaged table: no name, no symbol (module+offset instead) */
		syms[n++] = (struct sym){ raw[i].st_value, raw[i].st_size, raw[i].st_name,
					  ELF64_ST_BIND(raw[i].st_info) == STB_GLOBAL };
	}
	free(raw);
	if (!n) {
		free(syms); free(strtab);
		return -1;
	}
	qsort(syms, n, sizeof(*syms), cmp_sym);
	f->syms = syms; f->nsyms = n;
	f->strtab = strtab;
	f->demangled = xcalloc(n, sizeof(char *));
	return 0;
}

static void symfile_load(struct symfile *f, const char *path)
{
	/* O_NONBLOCK: a FIFO (or device) at that path must not hang the tool;
	 * anything but a regular file is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) return;
	struct stat sb;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	Elf64_Shdr *sh = NULL;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || read_at(fd, &eh, sizeof(eh), 0)) goto out;
	uint64_t fsize = (uint64_t)sb.st_size;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS ||
	    !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), fsize))
		goto out;
	ph = xmalloc(eh.e_phnum * sizeof(Elf64_Phdr));
	if (read_at(fd, ph, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), eh.e_phoff)) goto out;
	f->loads = xmalloc(eh.e_phnum * sizeof(*f->loads));
	for (size_t i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz)
			f->loads[f->nloads++] = (struct load){ ph[i].p_offset, ph[i].p_filesz, ph[i].p_vaddr };
	/* section headers (e_shnum 0 with e_shoff set: the count is in section 0) */
	uint64_t shnum = eh.e_shnum;
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0) goto out;
	if (shnum == 0) {
		Elf64_Shdr s0;
		if (!in_file(eh.e_shoff, sizeof(s0), fsize) || read_at(fd, &s0, sizeof(s0), eh.e_shoff)) goto out;
		shnum = s0.sh_size;
	}
	if (shnum == 0 || shnum > MAX_SHDRS || !in_file(eh.e_shoff, shnum * sizeof(Elf64_Shdr), fsize)) goto out;
	sh = xmalloc(shnum * sizeof(Elf64_Shdr));
	if (read_at(fd, sh, shnum * sizeof(Elf64_Shdr), eh.e_shoff)) goto out;
	if (load_symtab(f, fd, fsize, sh, shnum, SHT_SYMTAB) && load_symtab(f, fd, fsize, sh, shnum, SHT_DYNSYM))
		goto out;
	f->ok = f->nloads > 0;
out:
	free(ph);
	free(sh);
	close(fd);
}

static struct symfile *symfile_get(struct symcache *c, const char *path)
{
	int is_new;
	size_t *slot = strmap_get(&c->idx, path, &is_new);
	if (!is_new) return c->files[*slot];
	struct symfile *f = xcalloc(1, sizeof(*f));
	symfile_load(f, path);
	*slot = c->n;
	VEC_PUSH(c->files, c->n, c->cap, f);
	return f;
}

static int contains(const struct sym *s, uint64_t vaddr)
{
	return vaddr >= s->addr && vaddr - s->addr < s->size;
}

const char *symcache_lookup(struct symcache *c, const char *path, uint64_t file_offset)
{
	if (!path || !*path) return NULL;
	struct symfile *f = symfile_get(c, path);
	if (!f->ok) return NULL;
	uint64_t vaddr = 0;
	size_t i;
	for (i = 0; i < f->nloads; i++)
		if (file_offset >= f->loads[i].off && file_offset - f->loads[i].off < f->loads[i].filesz) {
			vaddr = file_offset - f->loads[i].off + f->loads[i].vaddr;
			break;
		}
	if (i == f->nloads) return NULL;
	/* last symbol with addr <= vaddr */
	size_t lo = FIRST_WHERE(k, f->nsyms, f->syms[k].addr > vaddr);
	if (lo == 0) return NULL;
	size_t best = lo - 1;
	/* the nearest may be a small symbol beside a larger one that holds the
	 * address (nested/overlapping ranges): look a few entries back */
	size_t found = SIZE_MAX;
	for (size_t k = 0; k < 32 && k <= best; k++)
		if (contains(&f->syms[best - k], vaddr)) { found = best - k; break; }
	if (found == SIZE_MAX) {
		if (f->syms[best].size != 0) return NULL;  /* in a gap between functions */
		found = best;  /* size-less symbol (assembly): nearest below */
	}
	/* the first alias at that address (sorted: global names first) */
	while (found > 0 && f->syms[found - 1].addr == f->syms[found].addr) found--;
	if (!f->demangled[found]) f->demangled[found] = demangle(f->strtab + f->syms[found].name);
	return f->demangled[found];
}
