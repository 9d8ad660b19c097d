/* The only source of headwise_python_lib (python/CMakeLists.txt): that shared library is the
 * static libheadwise linked whole, so the Python module can load it with dlopen. ISO C wants
 * at least one declaration per translation unit. */
typedef int headwise_python_lib_has_no_code_of_its_own;
