# 8 nodes of 8 GPUs, and a layout of 8 x 3 that cannot fill them.
torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py \
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 3 \
  --micro-batch-size 1 --seq-length 4096
