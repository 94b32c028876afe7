/**
 * Each field of Trinity-RFT's config dataclasses (trinity/common/config.py): its type, which decides
 * how OmegaConf converts what a config gives it, and its default, which OmegaConf fills in where the
 * config leaves the field out. Read by `tcod import trinity` for an interpolation of a key the file
 * does not write (`${buffer.batch_size}` is Trinity's default, 1), for Python's str() of a field's
 * value inside a longer string (an int field's 5 is '5', a float field's '5.0', an enum member's
 * 'SyncMethod.NCCL'), and to check each value against its field's type (an enum field's members).
 *
 * The one table of Trinity's schema the import reads: import.ts's DATACLASSES (each dataclass's
 * keys, and its fields that are dataclasses or lists or mappings of them, which Trinity's structured
 * merge looks into) and NULLABLE (the fields that take None) are derived from it. The union over the
 * releases 0.4.1, 0.5.0, 0.5.1, 0.5.2 and 0.6.0 (the TCOD fork is 0.5.0.dev0; the upstream export
 * target is 0.6.0): each dataclass's fields in 0.6.0's order, then those of earlier releases;
 * test/trinity/nullable-drift.test.ts checks keys, types, nesting, Optional and defaults against the
 * installed release. A default that differs between releases is `releases(…)`, each release's; an
 * interpolation of it is refused, since which one Trinity fills depends on the release. `auto(…)`: a
 * field Trinity fills itself when it checks the config (its validators, `check_and_update`, after
 * OmegaConf has resolved every interpolation), so the default written here is a placeholder
 * (`buffer.train_batch_size` 0 stands for batch_size × repeat_times) that an interpolation of it would
 * get instead of the value a run uses; such an interpolation is refused. Those are the fields the
 * validators of the releases set from other keys or from the cluster, or fill where unset, and those
 * marked "DO NOT SET, automatically set".
 */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };

/**
 * Trinity-RFT's enums of config values (trinity/common/constants.py): OmegaConf converts a string by
 * member name, which Trinity's CaseInsensitiveEnumMeta reads in any case, after its aliases; a
 * prefix `SyncMethod.` is dropped first (OmegaConf's EnumNode). The union over the releases:
 * SyncStyle's fully_async is 0.6.0's; 0.4.1 has dynamic_by_explorer and dynamic_by_trainer as members,
 * later releases as aliases of explorer_driven and trainer_driven.
 */
export const ENUMS = {
  PromptType: { members: ["messages", "plaintext"], aliases: {} },
  SyncMethod: { members: ["nccl", "checkpoint", "memory"], aliases: { online: "nccl", offline: "checkpoint" } },
  SyncStyle: {
    members: ["fixed", "trainer_driven", "explorer_driven", "fully_async"],
    aliases: { dynamic_by_explorer: "explorer_driven", dynamic_by_trainer: "trainer_driven" },
  },
  SaveStrategy: { members: ["single_thread", "single_process", "single_node", "unrestricted"], aliases: {} },
} as const satisfies Record<string, { members: readonly string[]; aliases: Readonly<Record<string, string>> }>;
export type EnumName = keyof typeof ENUMS;

/** A field's type: a scalar, an enum, a free-form list or dict, Any, or a dataclass (a section). */
export type FieldType = "int" | "float" | "str" | "bool" | "list" | "dict" | "any" | { enum: EnumName } | { section: string };
/** The section itself (default_factory=TheDataclass), in a `releases(…)` of a section field. */
const SECTION = { section: true } as const;
/**
 * A field's default: a value (`null` for None), the section with its own defaults, each release's
 * where they differ, or none (StageConfig.stage_name must be given).
 */
export type FieldDefault =
  | { kind: "value"; value: Json }
  | { kind: "section" }
  | { kind: "releases"; values: Readonly<Record<string, Json | typeof SECTION>> }
  | { kind: "required" };
export interface Field {
  type: FieldType;
  default: FieldDefault;
  /**
   * Whether the field takes None (Optional[…] or Any in some release): a default of None in any
   * release makes it so, `optional(…)` marks the others. OmegaConf's structured merge refuses None
   * for any other field, and Trinity the config.
   */
  nullable: boolean;
  /** The dataclass of each item, for a list or dict of dataclasses, which Trinity's merge checks too. */
  items?: string;
  /**
   * The type of the items of a default list or dict that holds some (`betas`' floats): what an
   * interpolation of one (`${algorithm.optimizer.betas.0}`) gets, a float's str() '0.9', '2.0'.
   */
  itemType?: "int" | "float" | "str" | "bool";
  /** Trinity fills it when it checks the config: the default is a placeholder. */
  auto?: true;
}

const REQUIRED = { kind: "required" } as const;
const releases = (values: Readonly<Record<string, Json | typeof SECTION>>): FieldDefault => ({ kind: "releases", values });
const of = (type: FieldType) => (d: Json | FieldDefault): Field => {
  const fd: FieldDefault = d !== null && typeof d === "object" && "kind" in d && typeof d.kind === "string" ? d as FieldDefault : { kind: "value", value: d as Json };
  const noneDefault = fd.kind === "value" ? fd.value === null : fd.kind === "releases" && Object.values(fd.values).includes(null);
  return { type, default: fd, nullable: type === "any" || noneDefault };
};
const int = of("int"), float = of("float"), str = of("str"), bool = of("bool"), list = of("list"), dict = of("dict"), any = of("any");
const enumOf = (name: EnumName, d: Json): Field => of({ enum: name })(d);
/** A dataclass field: its section by default (default_factory), else the default given (None). */
const section = (name: string, d?: Json | FieldDefault): Field => (d === undefined ? { type: { section: name }, default: { kind: "section" }, nullable: false } : of({ section: name })(d));
/** A list (`listOf`) or mapping of free names (`dictOf`) of the dataclass `name`. */
const listOf = (name: string, d: Json): Field => ({ ...list(d), items: name });
const dictOf = (name: string, d: Json): Field => ({ ...dict(d), items: name });
const auto = (f: Field): Field => ({ ...f, auto: true });
/** A default list or dict whose items are of `itemType`. */
const holding = (itemType: NonNullable<Field["itemType"]>, f: Field): Field => ({ ...f, itemType });
/** Optional[…] with a default other than None (in the release the comment beside it names, if not all). */
const optional = (f: Field): Field => ({ ...f, nullable: true });

/** Each dataclass's fields, in the order of trinity/common/config.py (0.6.0's, then fields of earlier releases). */
export const FIELDS: Readonly<Record<string, Readonly<Record<string, Field>>>> = {
  AlgorithmConfig: {
    algorithm_type: str("ppo"),
    repeat_times: int(1),
    optimizer: section("OptimizerConfig"),
    sample_strategy: auto(str(null)),
    sample_strategy_args: auto(dict(null)),
    advantage_fn: auto(str(null)),
    advantage_fn_args: auto(dict(null)),
    kl_penalty_fn: auto(str(null)),
    kl_penalty_fn_args: auto(dict(null)),
    policy_loss_fn: auto(str(null)),
    policy_loss_fn_args: auto(dict(null)),
    kl_loss_fn: auto(str(null)),
    kl_loss_fn_args: auto(dict(null)),
    entropy_loss_fn: auto(str(null)),
    entropy_loss_fn_args: auto(dict(null)),
    loss_agg_mode: auto(str(null)),
    enable_router_replay: bool(false),
    bypass_old_logprobs: bool(true),
    rollout_correction: dict(null),
  },
  BufferConfig: {
    batch_size: int(1),
    train_batch_size: auto(int(0)),
    total_epochs: int(1),
    total_steps: int(null),
    explorer_input: section("ExplorerInput"),
    trainer_input: section("TrainerInput"),
    explorer_output: auto(section("StorageConfig", null)),
    tokenizer_path: auto(str(null)),
    cache_dir: auto(str(null)),
    pad_token_id: auto(int(null)),
  },
  ClusterConfig: {
    ray_address: str("auto"),
    node_num: auto(int(releases({"0.4.1": null, "0.5.0": 0, "0.5.1": 0, "0.5.2": 0, "0.6.0": 0}))),
    gpu_per_node: auto(int(releases({"0.4.1": null, "0.5.0": 0, "0.5.1": 0, "0.5.2": 0, "0.6.0": 0}))),
    total_gpu_num: auto(int(0)),
    rollout_gpu_num: auto(int(0)),
    auxiliary_model_gpu_num: auto(int(0)),
    explorer_gpu_num: auto(int(0)),
    trainer_gpu_num: auto(int(0)),
    trainer_node_num: auto(int(0)),
    trainer_gpu_num_per_node: auto(int(0)),
  },
  Config: {
    mode: str("both"),
    project: str("Trinity-RFT"),
    group: str(""),
    name: str("rft"),
    checkpoint_root_dir: auto(str("")),
    checkpoint_job_dir: auto(str("")),
    ray_namespace: auto(str("")),
    continue_from_checkpoint: bool(true),
    ignore_validator_suggestions: bool(false),
    algorithm: section("AlgorithmConfig"),
    data_processor: section("DataProcessorConfig"),
    model: section("ModelConfig"),
    cluster: section("ClusterConfig"),
    buffer: section("BufferConfig"),
    explorer: section("ExplorerConfig"),
    trainer: section("TrainerConfig"),
    monitor: section("MonitorConfig"),
    synchronizer: section("SynchronizerConfig"),
    service: section("ServiceConfig"),
    log: section("LogConfig"),
    stages: listOf("StageConfig", []),
  },
  DataJuicerServiceConfig: {
    server_url: str(null),
    auto_start: bool(false),
    port: int(null),
  },
  DataProcessorConfig: {
    task_pipeline: section("TaskPipelineConfig", null),
    experience_pipeline: optional(section("ExperiencePipelineConfig")), // Optional up to 0.5.2
  },
  DataSelectorConfig: {
    selector_type: optional(str("sequential")),
    seed: int(42),
    feature_keys: list([]),
    kwargs: dict({}),
  },
  DynamicTimeoutConfig: {
    enable: bool(false),
    warmup_min_steps: int(1),
    ratio: float(3.0),
  },
  ExperienceBufferConfig: {
    name: auto(str("")),
    storage_type: auto(str("queue")),
    path: auto(str(null)),
    capacity: int(10000),
    max_read_timeout: float(1800),
    replay_buffer: optional(section("ReplayBufferConfig")),
    max_retry_times: int(3),
    max_retry_interval: int(1),
    split: str("train"),
    subset_name: str(null),
    format: section("FormatConfig"),
    enable_progress_bar: optional(bool(false)),
    data_selector: section("DataSelectorConfig"),
    schema_type: auto(str(null)),
    index: auto(int(0)),
    batch_size: auto(int(0)),
    tokenizer_path: auto(str(null)),
    total_epochs: auto(int(1)),
    total_steps: auto(int(null)),
    ray_namespace: auto(str(null)),
  },
  ExperiencePipelineConfig: {
    operators: listOf("OperatorConfig", []),
    save_input: bool(true),
    input_save_path: auto(str(null)),
    inputs: dictOf("ExperienceBufferConfig", {}),
    output: section("ExperienceBufferConfig", null),
  },
  ExplorerConfig: {
    name: str("explorer"),
    runner_per_model: int(8),
    runner_prepare_concurrency: int(8),
    runner_prepare_max_retries: int(2),
    max_timeout: int(1800),
    max_retry_times: int(2),
    env_vars: dict({}),
    concurrent_mode: str("sequential"),
    max_repeat_times_per_runner: int(null),
    runner_num: int(null),
    rollout_model: section("InferenceModelConfig"),
    auxiliary_models: listOf("InferenceModelConfig", []),
    eval_interval: int(100),
    eval_on_startup: bool(true),
    bench_on_latest_checkpoint: bool(false),
    proxy_port: int(8010),
    listen_address: str("0.0.0.0"),
    service_status_check_interval: int(60),
    min_running_model_num: int(1),
    db_url: str(null),
    over_rollout: section("OverRolloutConfig"),
    dynamic_timeout: section("DynamicTimeoutConfig"),
    runner_state_report_interval: int(0),
    max_inflight_batches: int(2),
  },
  ExplorerInput: {
    taskset: section("TasksetConfig", null),
    tasksets: listOf("TasksetConfig", []),
    eval_tasksets: listOf("TasksetConfig", []),
    default_workflow_type: str(null),
    default_eval_workflow_type: str(null),
    default_reward_fn_type: str(null),
  },
  ExternalModelConfig: {
    enable: bool(false),
    base_url_env: str("OPENAI_BASE_URL"),
    api_key_env: str("OPENAI_API_KEY"),
    model_name: str(null),
  },
  FormatConfig: {
    prompt_type: enumOf("PromptType", "messages"),
    prompt_key: str("prompt"),
    response_key: str("response"),
    system_prompt_key: str(null),
    system_prompt: str(null),
    messages_key: str("message"),
    tools_key: str("tools"),
    image_key: str(null),
    video_key: str(null),
    reply_prefix: str(null),
    workflow_key: str(""),
    reward_fn_key: str(""),
    chosen_key: str("chosen"),
    rejected_key: str("rejected"),
    enable_concatenated_multi_turn: bool(false),
    chat_template: auto(str(null)),
    enable_thinking: auto(bool(null)),
  },
  GenerationConfig: {
    temperature: auto(float(null)),
    top_p: auto(float(null)),
    top_k: auto(int(-1)),
    logprobs: auto(int(null)),
    max_tokens: auto(int(null)),
    n: auto(int(1)),
  },
  InferenceModelConfig: {
    model_path: auto(str(null)),
    name: str(null),
    trust_remote_code: auto(bool(false)),
    engine_type: auto(str("vllm")),
    engine_num: int(1),
    tensor_parallel_size: int(1),
    data_parallel_size: int(1),
    pipeline_parallel_size: int(1),
    enable_expert_parallel: bool(false),
    gpu_per_engine: auto(int(0)),
    extra_engine_args: dict({}),
    use_v1: bool(true),
    enforce_eager: bool(false),
    enable_prefix_caching: bool(true),
    enable_chunked_prefill: bool(true),
    gpu_memory_utilization: float(0.9),
    dtype: str("bfloat16"),
    seed: int(42),
    temperature: auto(float(null)),
    top_p: auto(float(null)),
    top_k: auto(int(null)),
    logprobs: auto(int(null)),
    max_model_len: auto(int(null)),
    max_prompt_tokens: auto(int(null)),
    max_response_tokens: auto(int(null)),
    min_response_tokens: auto(int(null)),
    enable_prompt_truncation: auto(bool(null)),
    repetition_penalty: auto(float(null)),
    ignore_eos: bool(false),
    enable_multimodal: bool(false),
    chat_template: auto(str(null)),
    enable_thinking: auto(bool(releases({"0.4.1": false, "0.5.0": null, "0.5.1": null, "0.5.2": null, "0.6.0": null}))),
    enable_history: auto(bool(false)),
    enable_openai_api: auto(bool(false)),
    enable_log_requests: bool(false),
    base_port: int(null),
    api_key: str("EMPTY"),
    enable_auto_tool_choice: bool(false),
    tool_call_parser: str(null),
    reasoning_parser: str(null),
    external_model_config: section("ExternalModelConfig"),
    nnodes: auto(int(1)),
    node_rank: auto(int(0)),
    enable_return_routed_experts: auto(bool(false)),
    weight_sync_buffer_size: int(1024),
    bundle_indices: auto(str("")),
    engine_id: auto(int(0)),
    ray_namespace: auto(str(null)),
    ray_actor_name: auto(str(null)),
    sync_method: auto(enumOf("SyncMethod", null)),
    checkpoint_job_dir: auto(str(null)),
    cuda_visible_devices: auto(str(null)),
    enable_lora: auto(bool(false)),
    enable_runtime_lora_updating: auto(bool(false)),
    lora_modules: auto(list(null)),
    lora_kwargs: optional(auto(dict({}))), // Optional up to 0.5.2
    rope_scaling: auto(dict(null)),
    rope_theta: auto(float(null)),
  },
  LoRAConfig: {
    name: str(null),
    path: auto(str(null)),
    base_model_name: str(null),
    lora_rank: int(32),
    lora_alpha: int(32),
    lora_dtype: str("auto"),
    target_modules: str("all-linear"),
    exclude_modules: str(null),
    is_dummy: auto(bool(false)),
  },
  LogConfig: {
    level: str("INFO"),
    group_by_node: bool(false),
    save_dir: auto(str("")),
  },
  MegatronParallelConfig: {
    tensor_model_parallel_size: int(1),
    pipeline_model_parallel_size: int(1),
    virtual_pipeline_model_parallel_size: int(null),
    expert_model_parallel_size: int(1),
    expert_tensor_parallel_size: int(null),
    context_parallel_size: int(1),
    sequence_parallel: bool(true),
  },
  ModelConfig: {
    model_path: str(""),
    trust_remote_code: bool(false),
    critic_model_path: auto(str("")),
    custom_chat_template: auto(str(null)),
    chat_template_path: str(null),
    temperature: float(1.0),
    top_p: float(1.0),
    top_k: int(-1),
    logprobs: int(0),
    max_model_len: auto(int(null)),
    max_prompt_tokens: auto(int(null)),
    max_response_tokens: auto(int(null)),
    min_response_tokens: auto(int(0)),
    enable_prompt_truncation: bool(true),
    repetition_penalty: float(1.0),
    enable_thinking: bool(null),
    lora_configs: listOf("LoRAConfig", null),
    fully_sharded_loras: bool(false),
    max_cpu_loras: int(null),
    rope_scaling: dict(null),
    rope_theta: float(null),
    tinker: section("TinkerConfig"),
    external_model: section("ExternalModelConfig"),
  },
  MonitorConfig: {
    monitor_type: str("tensorboard"),
    monitor_args: auto(dict(null)),
    detailed_stats: bool(false),
    enable_ray_timeline: bool(false),
    cache_dir: auto(str("")),
  },
  OperatorConfig: {
    name: str(""),
    args: dict({}),
  },
  OptimizerConfig: {
    lr: float(1e-06),
    lr_warmup_steps: int(-1),
    lr_warmup_steps_ratio: float(0.0),
    min_lr_ratio: float(releases({"0.4.1": 0.0, "0.5.0": 0.0, "0.5.1": 0.0, "0.5.2": 0.01, "0.6.0": 0.01})),
    warmup_style: str(null),
    lr_scheduler_type: auto(str("constant")),
    optimizer_type: str("adam"),
    betas: holding("float", list([0.9, 0.999])),
    weight_decay: float(0.01),
    clip_grad: float(1.0),
  },
  OverRolloutConfig: {
    ratio: float(0.0),
    wait_after_min: float(30.0),
    return_partial_tasks: bool(false),
  },
  ReplayBufferConfig: {
    enable: bool(false),
    priority_fn: str("linear_decay"),
    reuse_cooldown_time: float(null),
    priority_fn_args: holding("float", dict({"decay": 2.0})),
  },
  ServiceConfig: {
    data_juicer: section("DataJuicerServiceConfig", null),
  },
  StageConfig: {
    stage_name: str(REQUIRED),
    mode: str(null),
    algorithm: section("AlgorithmConfig", null),
    buffer: section("BufferConfig", null),
    data_processor: section("DataProcessorConfig", null),
    explorer: section("ExplorerConfig", null),
    trainer: section("TrainerConfig", null),
  },
  StorageConfig: {
    name: str(""),
    storage_type: str("file"),
    path: str(null),
    repeat_times: int(null),
    index: int(0),
    split: str("train"),
    subset_name: str(null),
    format: section("FormatConfig"),
    capacity: int(10000),
    max_read_timeout: float(1800),
    replay_buffer: optional(section("ReplayBufferConfig")),
    max_retry_times: int(3),
    max_retry_interval: int(1),
    default_workflow_type: str(null),
    default_reward_fn_type: str(null),
    rollout_args: section("GenerationConfig"),
    workflow_args: dict({}),
    reward_fn_args: dict({}),
    data_selector: section("DataSelectorConfig"),
    enable_progress_bar: optional(bool(false)),
    ray_namespace: str(null),
    wrap_in_ray: bool(true),
    schema_type: auto(str(null)),
    total_epochs: auto(int(1)),
    total_steps: auto(int(null)),
    batch_size: auto(int(0)),
    tokenizer_path: auto(str(null)),
    is_eval: auto(bool(false)),
    task_selector: section("DataSelectorConfig"),
  },
  SynchronizerConfig: {
    sync_method: enumOf("SyncMethod", "nccl"),
    sync_style: enumOf("SyncStyle", "fixed"),
    sync_interval: int(1),
    explorer_sync_interval: auto(int(null)),
    trainer_sync_interval: auto(int(null)),
    sync_offset: int(0),
    sync_timeout: int(3600),
    group_name: str("rollout_weight_sync"),
    wait_for_checkpoint: bool(false),
    explorer_world_size: auto(int(null)),
    ray_namespace: auto(str("")),
  },
  TaskPipelineConfig: {
    operators: listOf("OperatorConfig", []),
    num_process: int(4),
    config_path: str(null),
    inputs: list([]),
    output: auto(section("TasksetConfig", null)),
    target_fields: list([]),
    priority_weights: dict({}),
    top_k: int(-1),
  },
  TasksetConfig: {
    name: str(""),
    storage_type: str("file"),
    path: str(null),
    default_workflow_type: auto(str(null)),
    default_reward_fn_type: auto(str(null)),
    rollout_args: section("GenerationConfig"),
    workflow_args: dict({}),
    reward_fn_args: dict({}),
    task_selector: section("DataSelectorConfig", releases({ "0.4.1": SECTION, "0.5.0": SECTION, "0.5.1": SECTION, "0.5.2": null, "0.6.0": null })),
    data_selector: section("DataSelectorConfig"),
    split: str("train"),
    subset_name: str(null),
    format: section("FormatConfig"),
    max_retry_times: int(3),
    max_retry_interval: int(1),
    enable_progress_bar: bool(false),
    repeat_times: auto(int(1)),
    index: auto(int(0)),
    is_eval: auto(bool(false)),
    batch_size: auto(int(0)),
    total_epochs: auto(int(1)),
    total_steps: auto(int(null)),
    ray_namespace: auto(str(null)),
  },
  TinkerConfig: {
    enable: bool(false),
    rank: int(releases({"0.4.1": 32, "0.5.0": 16, "0.5.1": 16, "0.5.2": 16, "0.6.0": 16})),
    seed: int(null),
    train_mlp: bool(true),
    train_attn: bool(true),
    train_unembed: bool(true),
    base_url: str(null),
  },
  TrainerConfig: {
    name: str("trainer"),
    trainer_type: str("verl"),
    trainer_strategy: str(releases({"0.4.1": "fsdp", "0.5.0": "fsdp", "0.5.1": "fsdp", "0.5.2": "fsdp", "0.6.0": "fsdp2"})),
    save_interval: int(0),
    enable_preview: bool(releases({"0.4.1": true, "0.5.0": true, "0.5.1": true, "0.5.2": true, "0.6.0": false})),
    total_steps: int(null),
    save_hf_checkpoint: str("last"),
    grad_clip: float(1.0),
    use_dynamic_bsz: bool(true),
    use_remove_padding: bool(true),
    balance_batch: bool(true),
    critic_warmup: int(0),
    max_token_len_per_gpu: auto(int(null)),
    ulysses_sequence_parallel_size: int(1),
    fix_actor_microbatch_loss_scale: bool(false),
    param_offload: bool(false),
    optimizer_offload: bool(false),
    grad_offload: bool(false),
    offload_policy: bool(false),
    save_strategy: enumOf("SaveStrategy", "unrestricted"),
    max_checkpoints_to_keep: int(releases({"0.4.1": null, "0.5.0": null, "0.5.1": null, "0.5.2": null, "0.6.0": 0})),
    megatron: section("MegatronParallelConfig"),
    trust_remote_code: auto(bool(false)),
    trainer_config: auto(any({})),
    trainer_config_path: str(""),
  },
  TrainerInput: {
    experience_buffer: section("ExperienceBufferConfig", null),
    auxiliary_buffers: dictOf("ExperienceBufferConfig", {}),
  },
};

/**
 * A field whose value Trinity's structured merge looks into: "one" a dataclass, "list" a list of
 * them, "map" a mapping of free names to them. Every other field (a scalar, or a dict or Any such as
 * workflow_args, env_vars, *_args, kwargs, trainer_config) takes any keys and is not looked into.
 */
export type Nested = readonly [field: string, shape: "one" | "list" | "map", dataclass: string];
/** Each dataclass of FIELDS: its keys, and its Nested fields, in its field order. */
export const DATACLASSES: Readonly<Record<string, { keys: ReadonlySet<string>; nested: readonly Nested[] }>> = Object.fromEntries(
  Object.entries(FIELDS).map(([name, fields]) => [name, {
    keys: new Set(Object.keys(fields)),
    nested: Object.entries(fields).flatMap(([field, f]): Nested[] =>
      typeof f.type === "object" && "section" in f.type ? [[field, "one", f.type.section]]
      : f.items !== undefined ? [[field, f.type === "list" ? "list" : "map", f.items]]
      : []),
  }]),
);
