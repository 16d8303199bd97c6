// A library file named libcudart.so.N (soname libcudart.so.N, N = FAKE_CUDART_MAJOR): what a job
// built for CUDA N has mapped when the agent starts. It only answers cudaRuntimeGetVersion
// (12.8 = 12080 for the CUDA 12 build, 13.0 = 13000 for the CUDA 13 one).

#ifndef FAKE_CUDART_MAJOR
#define FAKE_CUDART_MAJOR 12
#endif

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT int cudaRuntimeGetVersion(int* version) {
    if (version == nullptr) {
        return 1;  // cudaErrorInvalidValue
    }
    *version = FAKE_CUDART_MAJOR == 12 ? 12080 : 13000;
    return 0;
}
