# shellcheck shell=bash
# job_env.sh - sourced by the MPI tests (test_ranks.sh, test_jacobi.sh):
# how they run Open MPI jobs on one host.
#   - as root (CI), which mpirun refuses unless told;
#   - on more ranks than cores: mpirun=(mpirun --oversubscribe);
#   - without the single-copy mechanism, which needs ptrace that
#     containers forbid;
#   - with Open MPI's and PMIx's components loaded to the end, so that a
#     sanitizer's leak report names their frames (tests/lsan.supp).
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
mpirun=(mpirun --oversubscribe)
