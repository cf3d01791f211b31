// The built-in prompt sets of `brisk bench` (see workloads.h). The texts are fixed data: a
// benchmark is only comparable across runs and machines if every run sends the same bytes, so
// nothing here is generated or randomised.
#include "bench/workloads.h"

#include <array>

namespace brisk {
namespace {

// One class: its system messages and its prompts, 8 per language, listed en/zh in the order they
// are served.
struct ClassTable {
  WorkloadClass cls;
  const char* system_en;
  const char* system_zh;
  int output_len;
  std::array<const char*, 8> en;
  std::array<const char*, 8> zh;
};

const ClassTable kQa = {
    WorkloadClass::kQa,
    "You are a helpful assistant.",
    "你是一个乐于助人的助手。",
    64,
    {
        "What is the boiling point of water at the top of Mount Everest?",
        "How do I remove a stripped screw without damaging the surface around it?",
        "Why does the moon always show the same face to the Earth?",
        "What is the difference between a virus and a bacterium, in simple terms?",
        "How long should I rest bread dough before baking it?",
        "Which planet in our solar system has the most moons right now?",
        "How can I tell whether an egg is still fresh without cracking it open?",
        "What does the Japanese word 'tsundoku' mean?",
    },
    {
        "长城大约有多长？",
        "怎样才能让绿萝长得更茂盛？",
        "为什么天空是蓝色的？请简单解释一下。",
        "高铁和普通火车的最高时速分别是多少？",
        "煮米饭时水和米的比例一般是多少？",
        "如何快速缓解打嗝？",
        "光从太阳传到地球需要多长时间？",
        "“画蛇添足”这个成语是什么意思？",
    },
};

const ClassTable kCopywriting = {
    WorkloadClass::kCopywriting,
    "You are an experienced copywriter. Write vivid, persuasive, well-structured text that fits "
    "the brief and the audience.",
    "你是一名经验丰富的文案策划。请根据需求写出生动、有说服力、结构清晰、符合目标受众的文字。",
    256,
    {
        "Write a product description for a stainless steel insulated water bottle that keeps "
        "drinks cold for 24 hours and hot for 12. The audience is hikers and commuters. Mention "
        "the leak-proof lid, the powder-coated grip and the lifetime warranty, and keep the tone "
        "upbeat but not pushy.",
        "Draft an email to our newsletter subscribers announcing that our small bakery is opening "
        "a second location on Maple Street next month. Invite them to the opening weekend, "
        "mention the free pastry for the first hundred visitors, and thank them for five years of "
        "support.",
        "Give me ten slogan options for a neighbourhood bicycle repair shop called Spoke & Chain. "
        "They should be short, friendly and a little playful, and at least three of them should "
        "play on the idea of keeping things rolling.",
        "Write the opening two paragraphs of a blog post titled 'Why I Switched to Paper "
        "Notebooks'. The author is a software developer who spends all day on screens and found "
        "that handwriting helps her think. Make it personal and honest, with a hook in the first "
        "sentence.",
        "Write a short bedtime story for children aged four to six about a shy lighthouse that is "
        "afraid of the dark. A friendly seagull helps it discover that its light guides the "
        "fishing boats home. Keep the sentences simple and end on a warm note.",
        "Write a product page blurb for noise-cancelling wireless earbuds aimed at students. "
        "Highlight the eight-hour battery life, the transparency mode for hearing announcements, "
        "and the price, which is half that of the big brands. Keep it under 150 words and finish "
        "with a call to action.",
        "Compose a polite but firm email to a supplier whose last two deliveries of packaging "
        "material arrived a week late. Explain the impact on our production schedule, ask for a "
        "plan to prevent further delays, and suggest a call later this week.",
        "Write a 200-word story that begins with a woman finding an old train ticket in a library "
        "book. The ticket is dated forty years ago and has a handwritten note on the back. Leave "
        "the ending open so the reader wonders what happens next.",
    },
    {
        "请为一款便携式咖啡研磨机写一段电商商品详情页文案。目标用户是喜欢露营和旅行的年轻人。"
        "要突出陶瓷磨芯、可调节研磨粗细、一次充电可以磨二十杯，以及重量只有三百克的特点，"
        "语气轻松有活力。",
        "帮我写一封给公司全体员工的邮件，通知下周五下午举办年中团建活动，地点在城郊的湖边农庄。"
        "说明集合时间、交通安排和需要自带的物品，并鼓励大家带家属参加，语气亲切温暖。",
        "为一家主打健康轻食的社区餐厅“青禾小馆”想十条宣传标语。要求简短好记，体现新鲜食材和"
        "低油低盐的理念，其中几条可以带一点幽默感，适合印在外卖包装袋上。",
        "写一篇博客文章的开头两段，题目是《我为什么开始每天早起一小时》。作者是一位三十岁的"
        "上班族，坚持早起半年后在读书、运动和情绪上都有变化。要写得真诚、有画面感，第一句就要"
        "抓住读者。",
        "写一个适合五到七岁孩子听的睡前故事：一只不会飞的小企鹅羡慕天上的鸟，后来在海里发现"
        "自己游泳特别厉害。故事要有简单的对话，句子短，结尾温馨，并带出“每个人都有自己的长处”"
        "的道理。",
        "为一款面向老年人的大字体智能手机写产品介绍。重点介绍一键呼叫子女、超长待机、外放"
        "音量大和防摔外壳这些功能。文字要通俗易懂，让子女看了愿意买给父母，篇幅在三百字以内。",
        "请写一封给客户的道歉邮件：由于系统升级，我们的在线订票服务昨晚中断了三个小时，部分"
        "订单重复扣款。说明原因、退款安排和补偿方案（赠送一张优惠券），语气诚恳专业。",
        "写一篇三百字左右的短篇小说，开头是一位快递员在雨夜送最后一单时，发现收件地址是一栋"
        "早已拆除的老房子。故事要有悬念，结尾留下想象空间。",
    },
};

const ClassTable kCode = {
    WorkloadClass::kCode,
    "You are an expert programmer. Give correct, idiomatic code with a brief explanation.",
    "你是一名资深程序员。请给出正确、规范的代码，并附上简要说明。",
    192,
    {
        "Write a Python function that takes a list of intervals as (start, end) tuples and merges "
        "all overlapping intervals, returning them sorted by start. Include a few test cases.",
        R"(This C++ function is supposed to return the index of the first element equal to the
target in a sorted vector, or -1 if it is absent, but it sometimes loops forever. Find the bug
and fix it:

int FirstIndex(const std::vector<int>& v, int target) {
  int lo = 0, hi = static_cast<int>(v.size()) - 1;
  int found = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (v[mid] == target) {
      found = mid;
      hi = mid;
    } else if (v[mid] < target) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
})",
        "Write a SQL query that returns, for each customer, the total amount spent in 2023 and "
        "the date of their most recent order. Tables: customers(id, name) and orders(id, "
        "customer_id, amount, created_at).",
        R"(Explain what this JavaScript code does, point out any problems, and rewrite it with
async/await:

function loadUsers(ids, callback) {
  const results = [];
  let pending = ids.length;
  ids.forEach(function (id) {
    fetch('/api/users/' + id)
      .then(function (res) { return res.json(); })
      .then(function (user) {
        results.push(user);
        pending--;
        if (pending === 0) {
          callback(results);
        }
      });
  });
})",
        "In Go, write a small worker pool: a function that takes a slice of URLs and a "
        "concurrency limit, fetches each URL with net/http, and returns a map from URL to status "
        "code. Handle errors and use a context with a timeout.",
        R"(Extend this Python class so that it supports a maximum size and evicts the least
recently used entry when full. Keep get and put O(1):

class Cache:
    def __init__(self):
        self.data = {}

    def get(self, key):
        if key in self.data:
            return self.data[key]
        return None

    def put(self, key, value):
        self.data[key] = value

    def __len__(self):
        return len(self.data)

    def clear(self):
        self.data.clear())",
        "Write a bash script that finds all files larger than 100 MB under a given directory, "
        "prints them sorted by size with human-readable sizes, and exits with an error if the "
        "directory does not exist.",
        R"(This Rust function should count word frequencies in a text, ignoring case and
punctuation, but it does not compile. Fix it and explain the errors:

use std::collections::HashMap;

fn word_counts(text: &str) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        let w = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if w.is_empty() {
            continue;
        }
        *counts.entry(&w).or_insert(0) += 1;
    }
    counts
})",
    },
    {
        "用 Python 写一个函数，判断一个字符串是否是有效的括号序列，支持小括号、中括号和大括号，"
        "并给出几个测试用例。",
        R"(下面这段 Python 代码用来统计日志文件中每个 IP 出现的次数，但处理大文件时很慢而且会
占用大量内存。请找出问题并优化：

def count_ips(path):
    lines = open(path).readlines()
    ips = []
    for line in lines:
        parts = line.split(' ')
        if len(parts) > 0:
            ips.append(parts[0])
    result = {}
    for ip in set(ips):
        result[ip] = ips.count(ip)
    top = sorted(result.items(), key=lambda x: x[1])
    top.reverse()
    return top[:10])",
        "用 C++ 实现一个线程安全的有界阻塞队列模板类，支持 push、pop 和带超时的 try_pop，"
        "使用 std::mutex 和 std::condition_variable。",
        R"(请解释下面这条 SQL 查询的作用，并指出在数据量很大时可能存在的性能问题，给出改写建议：

SELECT d.name,
       COUNT(*) AS staff,
       AVG(e.salary) AS avg_salary
FROM employees e
JOIN departments d ON d.id = e.department_id
WHERE e.id IN (
    SELECT employee_id
    FROM attendance
    WHERE YEAR(check_in) = 2023
    GROUP BY employee_id
    HAVING COUNT(*) > 200
)
GROUP BY d.name
ORDER BY avg_salary DESC;)",
        "用 JavaScript 写一个防抖函数 debounce(fn, wait)，支持立即执行选项和取消方法，"
        "并说明它和节流函数的区别。",
        R"(下面的 Go 程序有数据竞争，运行结果每次都不一样。请找出原因并修复：

package main

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	total := 0
	for i := 1; i <= 1000; i++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			total += n
		}(i)
	}
	wg.Wait()
	fmt.Println("total:", total)
})",
        "写一个 SQL 查询：找出每个商品类别中销量排名前三的商品，表结构为 products(id, name, "
        "category) 和 sales(product_id, quantity, sold_at)。",
        R"(请为下面这个 C++ 类补充拷贝构造函数、移动构造函数和对应的赋值运算符，并解释为什么
默认生成的版本在这里是错误的：

class Buffer {
 public:
  explicit Buffer(size_t n) : size_(n), data_(new char[n]) {}
  ~Buffer() { delete[] data_; }

  size_t size() const { return size_; }
  char* data() { return data_; }

  void Fill(char c) {
    for (size_t i = 0; i < size_; ++i) data_[i] = c;
  }

 private:
  size_t size_;
  char* data_;
};)",
    },
};

const ClassTable& TableFor(WorkloadClass c) {
  switch (c) {
    case WorkloadClass::kQa:
      return kQa;
    case WorkloadClass::kCopywriting:
      return kCopywriting;
    case WorkloadClass::kCode:
      return kCode;
  }
  return kQa;
}

// Prompt k (0..7) of one class in one language.
WorkloadPrompt Make(const ClassTable& t, bool zh, int k) {
  WorkloadPrompt p;
  p.cls = t.cls;
  p.lang = zh ? "zh" : "en";
  p.system = zh ? t.system_zh : t.system_en;
  p.user = zh ? t.zh[k] : t.en[k];
  p.output_len = t.output_len;
  return p;
}

std::vector<WorkloadPrompt> ClassPrompts(const ClassTable& t) {
  std::vector<WorkloadPrompt> out;
  for (int k = 0; k < 8; ++k) {
    out.push_back(Make(t, false, k));
    out.push_back(Make(t, true, k));
  }
  return out;
}

// Position i takes class i % 3 and language i % 2; every block of 6 positions holds each
// (class, language) pair exactly once, so block k = i / 6 serves prompt k of that pair and all
// 48 prompts appear once.
std::vector<WorkloadPrompt> MixPrompts() {
  constexpr WorkloadClass kOrder[3] = {WorkloadClass::kQa, WorkloadClass::kCopywriting,
                                       WorkloadClass::kCode};
  std::vector<WorkloadPrompt> out;
  for (int i = 0; i < 48; ++i) out.push_back(Make(TableFor(kOrder[i % 3]), i % 2 == 1, i / 6));
  return out;
}

}  // namespace

const char* WorkloadClassName(WorkloadClass c) {
  switch (c) {
    case WorkloadClass::kQa:
      return "qa";
    case WorkloadClass::kCopywriting:
      return "copywriting";
    case WorkloadClass::kCode:
      return "code";
  }
  return "?";
}

Result<std::vector<WorkloadPrompt>> WorkloadPrompts(std::string_view name) {
  if (name == "qa") return ClassPrompts(kQa);
  if (name == "copywriting") return ClassPrompts(kCopywriting);
  if (name == "code") return ClassPrompts(kCode);
  if (name == "mix") return MixPrompts();
  return Status::Error("unknown workload '" + std::string(name) +
                       "' (valid: qa, copywriting, code, mix)");
}

}  // namespace brisk
