// A library file named libcudart.so.12 (soname libcudart.so.12): what a job built for CUDA 12
// has mapped when the agent starts. It only answers cudaRuntimeGetVersion (12.8 = 12080).

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT int cudaRuntimeGetVersion(int* version) {
    if (version == nullptr) {
        return 1;  // cudaErrorInvalidValue
    }
    *version = 12080;
    return 0;
}
