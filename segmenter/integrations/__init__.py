"""The segmenter inside other frameworks: a spaCy pipeline component (sentences, topics, chunks), a
LangChain text splitter and a LlamaIndex node parser (chunks with exact offsets), and Ray Data for corpora."""
