#!/bin/bash
# A Megatron-LM launch script for Llama 3 70B on 32 nodes of 8 GPUs, in the
# style of Megatron-LM's examples (train_llama3_70b.sh and friends).
GPUS_PER_NODE=8
NNODES=32
TP=8
PP=4

DISTRIBUTED_ARGS="
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NNODES
    --node_rank 0
    --master_addr localhost
    --master_port 6000
"

MODEL_ARGS="
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --seq-length 8192
    --max-position-embeddings 8192
    --position-embedding-type rope
    --normalization RMSNorm
    --swiglu
    --disable-bias-linear
    --untie-embeddings-and-output-weights
    --vocab-size 128256
    --make-vocab-size-divisible-by 128
"

TRAINING_ARGS="
    --micro-batch-size 1
    --global-batch-size 256
    --train-iters 1000
    --lr 1.5e-4 --min-lr 1.5e-5
    --bf16
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --num-layers-per-virtual-pipeline-stage 4
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
    --recompute-granularity selective
    --use-flash-attn
    --exit-on-missing-checkpoint
    --log-interval 1
"

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \
    $MODEL_ARGS \
    $TRAINING_ARGS \
    --data-path "/data/my corpus_text_document"   # the corpus
