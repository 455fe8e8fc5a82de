// cxx_workload.cpp: a C++ program for the stack-completeness test (tests/stacks_complete.sh):
// operator new through libstdc++, std::string, std::map, std::vector, virtual calls, a thrown
// and caught exception, a lambda and make_shared, 300 rounds. Built -O2 -fomit-frame-pointer.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
struct Shape { virtual ~Shape() {} virtual std::string name() const = 0; };
struct Square : Shape { std::string name() const override { return std::string(40, 's'); } };
static int work(int i) {
	std::map<std::string, std::vector<int>> m;
	for (int k = 0; k < 50; k++)
		m[std::to_string(k * i) + "-key-long-enough-to-allocate"].push_back(k);
	std::vector<std::unique_ptr<Shape>> v;
	for (int k = 0; k < 20; k++) v.emplace_back(new Square);
	size_t n = 0;
	for (auto &s : v) n += s->name().size();
	try { if (i % 3 == 0) throw std::runtime_error(std::string(100, 'e')); }
	catch (const std::exception &e) { n += std::string(e.what()).size(); }
	auto f = [&](int x) { return std::make_shared<std::vector<long>>(x, 1L); };
	n += f(i % 50 + 1)->size();
	return (int)(n + m.size());
}
int main() { long t = 0; for (int i = 0; i < 300; i++) t += work(i); return t == 42; }
