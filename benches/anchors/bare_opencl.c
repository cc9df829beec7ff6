// The bare OpenCL floor of a process (issue 28): what the driver alone costs to start and end.
// Build: gcc -O2 bare_opencl.c -o bare -lOpenCL. Run: ./bare LETTERS; each step's time since
// the start goes to stderr; time the whole process from outside. Without letters it lists the
// platforms and the NVIDIA platform's devices, then exits. The letters add:
//   a  every platform's devices listed (PoCL's too)
//   c  a context and queue on the NVIDIA device
//   m  a 64 MiB device buffer written and a 32 MiB pinned buffer mapped
//   b  a one-line kernel built
//   r  everything released before the exit
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct timespec t0;

static double ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6;
}

int main(int argc, char **argv) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *m = argc > 1 ? argv[1] : "";
    cl_platform_id p[8];
    cl_uint np = 0;
    cl_int e = 0;
    clGetPlatformIDs(8, p, &np);
    fprintf(stderr, "%8.1f platforms %u\n", ms(), np);
    cl_device_id gpu = 0;
    for (cl_uint i = 0; i < np; i++) {
        char name[256] = {0};
        clGetPlatformInfo(p[i], CL_PLATFORM_NAME, sizeof name - 1, name, 0);
        int nvidia = strstr(name, "NVIDIA") != 0;
        if (!nvidia && !strchr(m, 'a'))
            continue;
        cl_device_id d[8];
        cl_uint nd = 0;
        clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 8, d, &nd);
        fprintf(stderr, "%8.1f devices of %s: %u\n", ms(), name, nd);
        if (nvidia && nd)
            gpu = d[0];
    }
    if (!strchr(m, 'c') || !gpu)
        return 0;
    cl_context ctx = clCreateContext(0, 1, &gpu, 0, 0, &e);
    cl_command_queue q = clCreateCommandQueue(ctx, gpu, 0, &e);
    fprintf(stderr, "%8.1f context %d\n", ms(), e);
    cl_mem a = 0, pin = 0;
    void *hp = 0;
    if (strchr(m, 'm')) {
        size_t n = 64 << 20;
        void *h = calloc(1, n);
        a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, 0, &e);
        clEnqueueWriteBuffer(q, a, CL_TRUE, 0, n, h, 0, 0, 0);
        free(h);
        pin = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, 32 << 20, 0, &e);
        hp = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_WRITE, 0, 32 << 20, 0, 0, 0, &e);
        if (hp)
            memset(hp, 1, 32 << 20);
        fprintf(stderr, "%8.1f memory %d\n", ms(), e);
    }
    cl_program pr = 0;
    cl_kernel k = 0;
    if (strchr(m, 'b')) {
        const char *src = "__kernel void f(__global int *x) { x[get_global_id(0)] += 1; }";
        pr = clCreateProgramWithSource(ctx, 1, &src, 0, &e);
        clBuildProgram(pr, 1, &gpu, "", 0, 0);
        k = clCreateKernel(pr, "f", &e);
        fprintf(stderr, "%8.1f built %d\n", ms(), e);
    }
    if (strchr(m, 'r')) {
        if (hp)
            clEnqueueUnmapMemObject(q, pin, hp, 0, 0, 0);
        clFinish(q);
        if (k)
            clReleaseKernel(k);
        if (pr)
            clReleaseProgram(pr);
        if (a)
            clReleaseMemObject(a);
        if (pin)
            clReleaseMemObject(pin);
        fprintf(stderr, "%8.1f objects released\n", ms());
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
        fprintf(stderr, "%8.1f context released\n", ms());
    }
    return 0;
}
